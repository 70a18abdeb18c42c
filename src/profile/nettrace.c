#include "nettrace.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* FastSerialization tags (TraceEvent's EventPipeFormat.md). */
#define TAG_NULL_REFERENCE	 1
#define TAG_BEGIN_PRIVATE_OBJECT 5
#define TAG_END_OBJECT		 6

#define MAX_METADATA_ID 65536 /* real traces use a few thousand */
#define NAME_SIZE	128
#define MAX_FILE_SIZE	(4ULL << 30)
/* Stacks kept between two sequence points: each costs more memory than
 * the 4 bytes a hostile block may give it. Real sessions write a few
 * thousand distinct stacks an interval. */
#define MAX_STACKS (1u << 22)

/* Reads little-endian values from a byte range; reading past its end sets
 * `bad` and yields zeros, so callers check once per record. */
struct cursor {
	const uint8_t *data;
	size_t size, position;
	bool bad;
};

static const uint8_t *take(struct cursor *cursor, size_t length)
{
	const uint8_t *at;

	if (cursor->bad || length > cursor->size - cursor->position) {
		cursor->bad = true;
		return NULL;
	}
	at = cursor->data + cursor->position;
	cursor->position += length;
	return at;
}

static uint64_t read_bytes(struct cursor *cursor, size_t length)
{
	const uint8_t *at = take(cursor, length);
	uint64_t value = 0;

	for (size_t i = 0; at && i < length; i++)
		value |= (uint64_t)at[i] << (8 * i);
	return value;
}

static uint8_t read_u8(struct cursor *cursor)
{
	return (uint8_t)read_bytes(cursor, 1);
}

static uint32_t read_u32(struct cursor *cursor)
{
	return (uint32_t)read_bytes(cursor, 4);
}

static uint64_t read_u64(struct cursor *cursor)
{
	return read_bytes(cursor, 8);
}

/* The format's variable-length integers: 7 bits a byte, low bits first. */
static uint64_t read_varint(struct cursor *cursor, unsigned max_bytes)
{
	uint64_t value = 0;

	for (unsigned i = 0; i < max_bytes; i++) {
		uint8_t byte = read_u8(cursor);

		value |= (uint64_t)(byte & 0x7f) << (7 * i);
		if (!(byte & 0x80))
			return value;
	}
	cursor->bad = true;
	return 0;
}

bool nettrace_read_string(const uint8_t **payload, size_t *remaining, char *out, size_t out_size)
{
	size_t length = 0;

	for (size_t i = 0; i + 1 < *remaining; i += 2) {
		uint16_t unit = (uint16_t)((*payload)[i] | (*payload)[i + 1] << 8);

		if (unit == 0) {
			if (out_size)
				out[length] = '\0';
			*payload += i + 2;
			*remaining -= i + 2;
			return true;
		}
		if (length + 1 < out_size)
			out[length++] = unit >= 0x20 && unit < 0x7f ? (char)unit : '?';
	}
	return false;
}

struct metadata {
	bool known;
	uint32_t event_id, version;
	char provider[NAME_SIZE], name[NAME_SIZE];
};

/* Stacks since the last sequence point: ids rise within a region. */
struct stack_entry {
	uint32_t id;
	const uint8_t *ips;
	size_t depth;
};

/* The header fields of the previous event, which a compressed header
 * leaves out or gives as a difference. */
struct event_header {
	uint32_t metadata_id, sequence, stack_id, processor;
	uint64_t thread_id, capture_thread_id, timestamp;
	uint32_t payload_size;
};

struct parser {
	struct nettrace_info *info;
	nettrace_event_fn on_event;
	void *context;
	struct metadata *metadata; /* indexed by metadata id */
	size_t metadata_capacity;
	struct stack_entry *stacks;
	size_t stack_count, stack_capacity;
	char *why;
	size_t why_size;
};

static int fail(struct parser *parser, const char *reason)
{
	snprintf(parser->why, parser->why_size, "%s", reason);
	return -1;
}

/* A metadata record: its id, provider, event id, name, keywords, version. */
static void add_metadata(struct parser *parser, const uint8_t *payload, size_t size)
{
	struct metadata entry = {.known = true};
	uint32_t id;

	if (size < 4)
		return;
	id = (uint32_t)(payload[0] | payload[1] << 8 | payload[2] << 16 |
			(uint32_t)payload[3] << 24);
	payload += 4;
	size -= 4;
	if (id == 0 || id >= MAX_METADATA_ID ||
	    !nettrace_read_string(&payload, &size, entry.provider, sizeof(entry.provider)) ||
	    size < 4)
		return;
	entry.event_id = (uint32_t)(payload[0] | payload[1] << 8 | payload[2] << 16 |
				    (uint32_t)payload[3] << 24);
	payload += 4;
	size -= 4;
	if (!nettrace_read_string(&payload, &size, entry.name, sizeof(entry.name)) || size < 12)
		return;
	entry.version = (uint32_t)(payload[8] | payload[9] << 8 | payload[10] << 16 |
				   (uint32_t)payload[11] << 24); /* after the keywords */
	if (id >= parser->metadata_capacity) {
		size_t old_capacity = parser->metadata_capacity;

		grow_array((void **)&parser->metadata, &parser->metadata_capacity, id + 1,
			   sizeof(*parser->metadata));
		memset(parser->metadata + old_capacity, 0,
		       (parser->metadata_capacity - old_capacity) * sizeof(*parser->metadata));
	}
	parser->metadata[id] = entry;
}

static const struct stack_entry *find_stack(const struct parser *parser, uint32_t id)
{
	size_t low = 0, high = parser->stack_count;

	while (low < high) {
		size_t middle = (low + high) / 2;

		if (parser->stacks[middle].id < id)
			low = middle + 1;
		else
			high = middle;
	}
	return low < parser->stack_count && parser->stacks[low].id == id ? &parser->stacks[low]
									 : NULL;
}

static void read_compressed_header(struct cursor *cursor, struct event_header *header)
{
	uint8_t flags = read_u8(cursor);

	if (flags & 1)
		header->metadata_id = (uint32_t)read_varint(cursor, 5);
	if (flags & 2) {
		header->sequence += (uint32_t)read_varint(cursor, 5);
		header->capture_thread_id = read_varint(cursor, 10);
		header->processor = (uint32_t)read_varint(cursor, 5);
	}
	if (header->metadata_id != 0)
		header->sequence++;
	if (flags & 4)
		header->thread_id = read_varint(cursor, 10);
	if (flags & 8)
		header->stack_id = (uint32_t)read_varint(cursor, 5);
	header->timestamp += read_varint(cursor, 10);
	if (flags & 16)
		take(cursor, 16); /* activity id */
	if (flags & 32)
		take(cursor, 16); /* related activity id */
	if (flags & 128)
		header->payload_size = (uint32_t)read_varint(cursor, 5);
}

/* The fixed-size header of versions before header compression. */
static void read_uncompressed_header(struct cursor *cursor, struct event_header *header)
{
	read_u32(cursor); /* the blob's size, which the payload size implies */
	header->metadata_id = read_u32(cursor) & 0x7fffffff; /* high bit: sorted */
	header->sequence = read_u32(cursor);
	header->thread_id = read_u64(cursor);
	header->capture_thread_id = read_u64(cursor);
	header->processor = read_u32(cursor);
	header->stack_id = read_u32(cursor);
	header->timestamp = read_u64(cursor);
	take(cursor, 32); /* activity and related activity ids */
	header->payload_size = read_u32(cursor);
}

static void pass_event(struct parser *parser, const struct event_header *header,
		       const uint8_t *payload)
{
	const struct metadata *metadata = header->metadata_id < parser->metadata_capacity
					      ? &parser->metadata[header->metadata_id]
					      : NULL;
	const struct stack_entry *stack = find_stack(parser, header->stack_id);
	struct nettrace_event event = {
	    .provider = metadata && metadata->known ? metadata->provider : "",
	    .name = metadata && metadata->known ? metadata->name : "",
	    .id = metadata && metadata->known ? metadata->event_id : 0,
	    .version = metadata && metadata->known ? metadata->version : 0,
	    .timestamp = header->timestamp,
	    .thread_id = header->thread_id,
	    .payload = payload,
	    .payload_size = header->payload_size,
	    .stack = stack ? stack->ips : NULL,
	    .stack_depth = stack ? stack->depth : 0,
	};

	parser->on_event(&event, parser->context);
}

/* An EventBlock or MetadataBlock: a header, then event blobs to its end.
 * `block_start` is its offset in the stream, for the 4-byte alignment of
 * uncompressed blobs. */
static int read_event_block(struct parser *parser, struct cursor *block, size_t block_start,
			    bool metadata_block)
{
	uint16_t header_size = (uint16_t)read_bytes(block, 2);
	uint16_t flags = (uint16_t)read_bytes(block, 2);
	struct event_header header = {0};
	bool compressed = flags & 1;

	if (block->bad || header_size < 4 || !take(block, header_size - 4u))
		return fail(parser, "an event block's header is damaged");
	while (block->position < block->size) {
		const uint8_t *payload;

		if (compressed)
			read_compressed_header(block, &header);
		else
			read_uncompressed_header(block, &header);
		payload = take(block, header.payload_size);
		if (block->bad)
			return fail(parser, "an event runs past the end of its block");
		if (metadata_block)
			add_metadata(parser, payload, header.payload_size);
		else
			pass_event(parser, &header, payload);
		if (!compressed)
			while ((block_start + block->position) % 4 && block->position < block->size)
				block->position++;
	}
	return 0;
}

/* A StackBlock: consecutive ids from the first, each a run of IPs. The
 * ids go on rising from block to block until the next sequence point
 * (SPBlock): an event names a stack once written by its id, and that
 * stack may lie in any earlier block since the sequence point, not only
 * the latest (the runtime writes each distinct stack once per interval). */
static int read_stack_block(struct parser *parser, struct cursor *block)
{
	uint32_t id = read_u32(block), count = read_u32(block);

	/* Ids that do not rise (a damaged or hostile trace) would break the
	 * binary search: such a block starts the list anew. */
	if (parser->stack_count && id <= parser->stacks[parser->stack_count - 1].id)
		parser->stack_count = 0;
	for (uint32_t i = 0; i < count && !block->bad; i++, id++) {
		uint32_t size = read_u32(block);
		const uint8_t *ips = take(block, size);

		if (block->bad || parser->stack_count == MAX_STACKS)
			continue;
		grow_array((void **)&parser->stacks, &parser->stack_capacity,
			   parser->stack_count + 1, sizeof(*parser->stacks));
		parser->stacks[parser->stack_count++] =
		    (struct stack_entry){id, ips, size / parser->info->pointer_size};
	}
	return block->bad ? fail(parser, "a stack block is damaged") : 0;
}

/* The Trace object's fields: the session's start and clock. */
static int read_trace_object(struct parser *parser, struct cursor *cursor)
{
	take(cursor, 16); /* SyncTimeUTC as eight shorts */
	parser->info->start_timestamp = read_u64(cursor);
	parser->info->ticks_per_second = read_u64(cursor);
	parser->info->pointer_size = read_u32(cursor);
	parser->info->process_id = read_u32(cursor);
	take(cursor, 8); /* processor count, expected sampling rate */
	if (cursor->bad)
		return -1;
	if ((parser->info->pointer_size != 4 && parser->info->pointer_size != 8) ||
	    !parser->info->ticks_per_second)
		return fail(parser, "the trace header has an impossible pointer size or clock");
	return 0;
}

/* A type object: tags, versions and the type's name. */
static int read_type(struct cursor *cursor, char *name, size_t name_size)
{
	uint32_t length;
	const uint8_t *text;

	if (read_u8(cursor) != TAG_BEGIN_PRIVATE_OBJECT || read_u8(cursor) != TAG_NULL_REFERENCE)
		return -1;
	take(cursor, 8); /* version, minimum reader version */
	length = read_u32(cursor);
	text = take(cursor, length);
	if (cursor->bad || read_u8(cursor) != TAG_END_OBJECT || length >= name_size)
		return -1;
	memcpy(name, text, length);
	name[length] = '\0';
	return 0;
}

/* One object after the tag that begins it. Returns 0, or -1: damaged (a
 * reason in `why`), or cut short (cursor->bad and no reason). */
static int read_object(struct parser *parser, struct cursor *cursor)
{
	char type[32];
	uint32_t block_size;
	size_t block_start;
	struct cursor block;
	int status = 0;

	if (read_type(cursor, type, sizeof(type)) < 0)
		return cursor->bad ? -1 : fail(parser, "an object's type is damaged");
	if (!strcmp(type, "Trace")) {
		if (read_trace_object(parser, cursor) < 0)
			return -1;
		return read_u8(cursor) == TAG_END_OBJECT || cursor->bad
			   ? (cursor->bad ? -1 : 0)
			   : fail(parser, "the trace header is damaged");
	}
	if (!parser->info->pointer_size)
		return fail(parser, "a block comes before the trace header");
	block_size = read_u32(cursor);
	while (cursor->position % 4 && !cursor->bad)
		take(cursor, 1);
	block_start = cursor->position;
	block = (struct cursor){.data = take(cursor, block_size), .size = block_size};
	if (cursor->bad)
		return -1;
	if (!strcmp(type, "EventBlock") || !strcmp(type, "MetadataBlock"))
		status = read_event_block(parser, &block, block_start, type[0] == 'M');
	else if (!strcmp(type, "StackBlock"))
		status = read_stack_block(parser, &block);
	else if (!strcmp(type, "SPBlock"))
		parser->stack_count = 0;
	/* Other types are newer additions, skipped by their size. */
	if (status == 0 && read_u8(cursor) != TAG_END_OBJECT && !cursor->bad)
		return fail(parser, "an object does not end where its size says");
	return status == 0 && cursor->bad ? -1 : status;
}

int nettrace_parse(const uint8_t *data, size_t size, struct nettrace_info *info,
		   nettrace_event_fn on_event, void *context, char *why, size_t why_size)
{
	static const char magic[] = "Nettrace\x14\0\0\0!FastSerialization.1";
	struct parser parser = {.info = info,
				.on_event = on_event,
				.context = context,
				.why = why,
				.why_size = why_size};
	struct cursor cursor = {.data = data, .size = size};
	int status = 0;

	*info = (struct nettrace_info){0};
	why[0] = '\0';
	if (size < sizeof(magic) - 1 || memcmp(data, magic, sizeof(magic) - 1)) {
		snprintf(why, why_size, "not a nettrace file (no Nettrace header)");
		return -1;
	}
	cursor.position = sizeof(magic) - 1;
	while (status == 0) {
		uint8_t tag = read_u8(&cursor);

		if (cursor.bad || tag == TAG_NULL_REFERENCE)
			break;
		if (tag != TAG_BEGIN_PRIVATE_OBJECT) {
			status = fail(&parser, "an object tag is damaged");
			break;
		}
		status = read_object(&parser, &cursor);
	}
	/* A stream that stops inside an object, or before its end tag, was
	 * cut short: keep what came before. */
	if (cursor.bad && !why[0]) {
		info->truncated = true;
		status = 0;
	}
	free(parser.metadata);
	free(parser.stacks);
	return status;
}

int nettrace_map_file(const char *path, nettrace_bytes_fn parse, void *context, char *why,
		      size_t why_size)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat status;
	void *data;
	int result;

	if (fd < 0 || fstat(fd, &status) < 0) {
		snprintf(why, why_size, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(status.st_mode) || (uint64_t)status.st_size > MAX_FILE_SIZE ||
	    status.st_size == 0) {
		snprintf(why, why_size, "%s",
			 status.st_size == 0 ? "it is empty"
					     : "not a regular file of at most 4 GiB");
		close(fd);
		return -1;
	}
	data = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED) {
		snprintf(why, why_size, "%s", strerror(errno));
		return -1;
	}
	result = parse(data, (size_t)status.st_size, context, why, why_size);
	munmap(data, (size_t)status.st_size);
	return result;
}
