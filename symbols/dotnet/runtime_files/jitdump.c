#include "jitdump.h"
#include "buffer.h"
#include "jit_frames.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JITDUMP_MAGIC	      0x4A695444u /* "JiTD" in the writer's byte order */
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define HEADER_SIZE	      40
#define MAX_HEADER_SIZE	      4096
#define RECORD_HEADER_SIZE    16
#define CODE_RECORD_SIZE      56	  /* header, pid, tid, and five 64-bit fields */
#define MAX_NAME_SIZE	      (64u << 10) /* .NET names reach a few hundred bytes */
#define FLAG_ARCH_TIMESTAMP   1u	  /* times from the CPU's counter, not the clock */

enum record_id {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

enum phase {
	READING_HEADER,	     /* the file header */
	READING_RECORD_HEAD, /* the 16-byte header of the next record */
	READING_RECORD_BODY, /* the part of a record that is kept */
	STOPPED,	     /* not a jitdump, or a size that cannot be trusted */
};

struct jitdump {
	bool framing_only; /* jitdump_new_framing() */
	struct code_ranges *ranges;
	struct jit_frames *frames; /* each code's prolog, for its unwind info */
	enum phase phase;
	bool timed;
	/* The header's machine is x86-64: jit_prolog.h reads x64 prologs
	 * only. An arm64 JIT keeps frame records, which the walk follows. */
	bool x64_code;
	unsigned char *buffer; /* the kept part of the current header or record */
	size_t buffered, wanted, buffer_capacity;
	uint64_t skip;	    /* bytes still to pass over */
	bool skipping_code; /* those are a code load's machine code */
	/* The start of that code, its prolog: kept, and read for unwind info. */
	uint8_t prolog[JIT_PROLOG_CODE_BYTES];
	size_t prolog_read;
	uint64_t code_start, code_time, code_size;
	uint64_t record_size;	       /* of the current record, once known */
	uint64_t record_consumed;      /* of it, kept or passed over */
	struct jitdump_summary counts; /* bytes, records, error */
};

struct jitdump *jitdump_new(void)
{
	struct jitdump *dump = calloc(1, sizeof(*dump));

	if (dump && (!(dump->ranges = code_ranges_new()) || !(dump->frames = jit_frames_new()))) {
		code_ranges_free(dump->ranges);
		free(dump);
		return NULL;
	}
	if (dump)
		dump->wanted = HEADER_SIZE;
	return dump;
}

struct jitdump *jitdump_new_framing(void)
{
	struct jitdump *dump = jitdump_new();

	if (dump)
		dump->framing_only = true;
	return dump;
}

void jitdump_free(struct jitdump *dump)
{
	if (!dump)
		return;
	code_ranges_free(dump->ranges);
	jit_frames_free(dump->frames);
	free(dump->buffer);
	free(dump);
}

static uint32_t read_u32(const unsigned char *bytes)
{
	uint32_t value;

	memcpy(&value, bytes, sizeof(value));
	return value;
}

static uint64_t read_u64(const unsigned char *bytes)
{
	uint64_t value;

	memcpy(&value, bytes, sizeof(value));
	return value;
}

static void stop(struct jitdump *dump, const char *why)
{
	dump->phase = STOPPED;
	dump->counts.error = why;
}

/* Passes over the rest of the current record, then expects the next. */
static void finish_record(struct jitdump *dump)
{
	dump->skip = dump->record_size - dump->record_consumed;
	dump->skipping_code = false;
	dump->record_consumed = dump->record_size;
	dump->phase = READING_RECORD_HEAD;
	dump->wanted = RECORD_HEADER_SIZE;
}

static void read_header(struct jitdump *dump)
{
	uint32_t magic = read_u32(dump->buffer), size = read_u32(dump->buffer + 8);

	if (magic == JITDUMP_MAGIC_SWAPPED)
		return stop(dump, "written on a machine of the other byte order");
	if (magic != JITDUMP_MAGIC)
		return stop(dump, "not a jitdump (wrong magic number)");
	if (size < HEADER_SIZE || size > MAX_HEADER_SIZE)
		return stop(dump, "the header's size is impossible");
	dump->counts.valid = true;
	dump->timed = !(read_u64(dump->buffer + 32) & FLAG_ARCH_TIMESTAMP);
	dump->x64_code = read_u32(dump->buffer + 12) == EM_X86_64;
	dump->record_size = size;
	dump->record_consumed = HEADER_SIZE;
	finish_record(dump);
}

static uint64_t record_time(const struct jitdump *dump)
{
	return dump->timed ? read_u64(dump->buffer + 8) : 0;
}

/* A code-load record: its fixed part says how long the name is, so the
 * name is read next and the code bytes after it are passed over. */
static void read_code_load(struct jitdump *dump)
{
	uint64_t address = read_u64(dump->buffer + 32), size = read_u64(dump->buffer + 40);
	uint64_t name_end;

	if (dump->buffered == CODE_RECORD_SIZE) {
		name_end = dump->record_size - size; /* the name ends with a NUL */
		if (size >= dump->record_size || name_end <= CODE_RECORD_SIZE ||
		    name_end - CODE_RECORD_SIZE > MAX_NAME_SIZE) {
			dump->counts.other_records++;
			return finish_record(dump);
		}
		if (dump->framing_only) {
			dump->counts.code_loads++;
			return finish_record(dump);
		}
		dump->wanted = (size_t)name_end;
		return;
	}
	code_ranges_add(dump->ranges, address, size, record_time(dump),
			(const char *)dump->buffer + CODE_RECORD_SIZE,
			strnlen((const char *)dump->buffer + CODE_RECORD_SIZE,
				dump->buffered - CODE_RECORD_SIZE));
	dump->counts.code_loads++;
	finish_record(dump);
	dump->skipping_code = true; /* what is left of a code load is its code */
	dump->code_start = address;
	dump->code_time = record_time(dump);
	dump->code_size = size;
	dump->prolog_read = 0;
}

/* How much of the current code load's code is its prolog, kept. */
static size_t prolog_size(const struct jitdump *dump)
{
	return dump->code_size < JIT_PROLOG_CODE_BYTES ? (size_t)dump->code_size
						       : JIT_PROLOG_CODE_BYTES;
}

/* Takes `length` bytes of a code load's code: its prolog is kept once whole,
 * to be read for unwind info when needed; in `writable`, the rest is cleared. */
static void take_code(struct jitdump *dump, const unsigned char *code, size_t length,
		      unsigned char *writable)
{
	size_t kept = 0;

	if (dump->prolog_read < prolog_size(dump)) {
		kept = prolog_size(dump) - dump->prolog_read;
		kept = kept < length ? kept : length;
		memcpy(dump->prolog + dump->prolog_read, code, kept);
		dump->prolog_read += kept;
		if (dump->prolog_read == prolog_size(dump))
			jit_frames_add(dump->frames, dump->code_start, dump->code_time,
				       dump->prolog, dump->prolog_read,
				       dump->code_size == dump->prolog_read);
	}
	if (writable && length > kept)
		memset(writable + kept, 0, length - kept);
}

/* A code-move record: the code at the old address, with its name, is at
 * the new one from the record's time on. */
static void read_code_move(struct jitdump *dump)
{
	uint64_t from = read_u64(dump->buffer + 32), to = read_u64(dump->buffer + 40);
	uint64_t size = read_u64(dump->buffer + 48), time = record_time(dump);
	struct code_range moved;

	if (code_ranges_lookup(dump->ranges, from, time, &moved)) {
		char *name = strdup(moved.name);

		if (name) {
			code_ranges_remove(dump->ranges, from, size, time);
			code_ranges_add(dump->ranges, to, size, time, name, strlen(name));
			free(name);
		}
	}
	dump->counts.code_moves++;
	finish_record(dump);
}

static void read_record_head(struct jitdump *dump)
{
	uint32_t id = read_u32(dump->buffer);

	dump->record_size = read_u32(dump->buffer + 4);
	dump->record_consumed = RECORD_HEADER_SIZE;
	if (dump->record_size < RECORD_HEADER_SIZE)
		return stop(dump, "a record smaller than its header");
	if ((id == JIT_CODE_LOAD || id == JIT_CODE_MOVE) && dump->record_size < CODE_RECORD_SIZE)
		return stop(dump, "a code record too small for its fields");
	if (id == JIT_CODE_LOAD || id == JIT_CODE_MOVE) {
		dump->phase = READING_RECORD_BODY;
		dump->wanted = CODE_RECORD_SIZE;
		return;
	}
	dump->counts.other_records++; /* debug info, unwinding info, close, newer kinds */
	finish_record(dump);
}

/* Acts on a buffer holding all it wanted. */
static void read_buffered(struct jitdump *dump)
{
	switch (dump->phase) {
	case READING_HEADER:
		read_header(dump);
		break;
	case READING_RECORD_HEAD:
		read_record_head(dump);
		break;
	case READING_RECORD_BODY:
		if (read_u32(dump->buffer) == JIT_CODE_MOVE)
			read_code_move(dump);
		else
			read_code_load(dump);
		break;
	case STOPPED:
		break;
	}
	if (dump->phase == READING_RECORD_HEAD)
		dump->buffered = 0;
}

/* Parses `length` bytes; with `writable` (the same bytes), overwrites the
 * machine code among them with zeros, but for each code's prolog. */
static void add_bytes(struct jitdump *dump, const unsigned char *bytes, size_t length,
		      unsigned char *writable)
{
	const unsigned char *cursor = bytes;

	while (length > 0 && dump->phase != STOPPED) {
		size_t taken;

		if (dump->skip) {
			taken = dump->skip < length ? (size_t)dump->skip : length;
			dump->skip -= taken;
			if (dump->skipping_code)
				take_code(dump, cursor, taken,
					  writable ? writable + (cursor - bytes) : NULL);
		} else {
			if (!buffer_reserve((void **)&dump->buffer, &dump->buffer_capacity,
					    dump->wanted, 1))
				return stop(dump, "out of memory");
			taken = dump->wanted - dump->buffered;
			taken = taken < length ? taken : length;
			memcpy(dump->buffer + dump->buffered, cursor, taken);
			dump->buffered += taken;
			if (dump->phase == READING_RECORD_BODY)
				dump->record_consumed += taken;
		}
		cursor += taken;
		length -= taken;
		dump->counts.bytes += taken;
		if (!dump->skip && dump->buffered == dump->wanted)
			read_buffered(dump);
	}
}

void jitdump_add_bytes(struct jitdump *dump, const void *bytes, size_t length)
{
	add_bytes(dump, bytes, length, NULL);
}

void jitdump_add_bytes_clearing_code(struct jitdump *dump, void *bytes, size_t length)
{
	add_bytes(dump, bytes, length, bytes);
}

int jitdump_read_more(struct jitdump *dump, int fd, uint64_t limit)
{
	unsigned char buffer[65536];
	ssize_t n;

	while (dump->counts.bytes < limit && dump->phase != STOPPED) {
		size_t wanted = limit - dump->counts.bytes < sizeof(buffer)
				    ? (size_t)(limit - dump->counts.bytes)
				    : sizeof(buffer);

		n = read(fd, buffer, wanted);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		jitdump_add_bytes(dump, buffer, (size_t)n);
	}
	return 0;
}

bool jitdump_lookup(struct jitdump *dump, uint64_t address, uint64_t time, struct code_range *found)
{
	return code_ranges_lookup(dump->ranges, address, time, found);
}

bool jitdump_unwind_at(struct jitdump *dump, uint64_t address, uint64_t time,
		       struct windows_unwind_code_at *unwind)
{
	struct code_range range;
	const struct jit_frame *frame;

	if (!dump->x64_code || !code_ranges_lookup(dump->ranges, address, time, &range) ||
	    !range.name || !(frame = jit_frames_find(dump->frames, range.start, range.time)))
		return false;
	unwind->info = frame->info;
	unwind->info_size = frame->info_size;
	unwind->offset = (uint32_t)(address - range.start);
	unwind->code = NULL;
	unwind->code_size = 0;
	unwind->packed = 0;
	unwind->osr = frame->osr;
	unwind->frame_at_stack_pointer = false;
	if (unwind->offset < frame->code_size) {
		unwind->code = frame->code + unwind->offset;
		unwind->code_size = frame->code_size - unwind->offset;
		if (unwind->code_size > WINDOWS_UNWIND_MAX_EPILOG)
			unwind->code_size = WINDOWS_UNWIND_MAX_EPILOG;
	}
	return true;
}

void jitdump_summarize(const struct jitdump *dump, struct jitdump_summary *summary)
{
	*summary = dump->counts;
	summary->timed = dump->timed;
	if (dump->phase == READING_RECORD_HEAD && !dump->skip) {
		summary->incomplete_bytes = dump->buffered;
		summary->missing_bytes = dump->buffered ? RECORD_HEADER_SIZE - dump->buffered : 0;
	} else if (dump->phase != STOPPED && dump->phase != READING_HEADER) {
		summary->incomplete_bytes =
		    dump->skip ? dump->record_size - dump->skip : dump->record_consumed;
		summary->missing_bytes =
		    dump->skip ? dump->skip : dump->record_size - dump->record_consumed;
	}
}
