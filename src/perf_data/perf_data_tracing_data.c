/* HEADER_TRACING_DATA, as perf lays it out (tools/perf/util/trace-event-info.c
 * in the Linux tree): what perf script needs to print a tracepoint's fields
 * ("prev_comm=... ==> next_comm=..."), read from tracefs at recording time,
 * and the decoding of the one tracepoint profcpu records. */
#include "perf_data.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct block {
	uint8_t *bytes;
	size_t size, capacity;
};

static void put(struct block *block, const void *bytes, size_t size)
{
	grow_array((void **)&block->bytes, &block->capacity, block->size + size + 1, 1);
	memcpy(block->bytes + block->size, bytes, size);
	block->size += size;
}

static void put_u32(struct block *block, uint32_t value)
{
	put(block, &value, sizeof(value));
}

static void put_u64(struct block *block, uint64_t value)
{
	put(block, &value, sizeof(value));
}

/* A file's contents after its u64 size. */
static void put_file(struct block *block, const char *bytes, size_t size)
{
	put_u64(block, size);
	put(block, bytes, size);
}

uint8_t *perf_data_tracing_data_build(const char *header_page, size_t header_page_size,
				      const char *header_event, size_t header_event_size,
				      const char *system, const char *const *formats,
				      const size_t *format_sizes, size_t format_count, size_t *size)
{
	static const char magic[] = "\027\010\104tracing";
	static const char version[] = "0.6";
	const uint8_t little_endian = 0, long_size = sizeof(long);
	struct block block = {0};

	put(&block, magic, sizeof(magic) - 1);
	put(&block, version, sizeof(version));
	put(&block, &little_endian, 1);
	put(&block, &long_size, 1);
	put_u32(&block, (uint32_t)sysconf(_SC_PAGESIZE));
	put(&block, "header_page", sizeof("header_page"));
	put_file(&block, header_page, header_page_size);
	put(&block, "header_event", sizeof("header_event"));
	put_file(&block, header_event, header_event_size);
	put_u32(&block, 0); /* ftrace's own events */
	put_u32(&block, 1); /* event systems */
	put(&block, system, strlen(system) + 1);
	put_u32(&block, (uint32_t)format_count);
	for (size_t i = 0; i < format_count; i++)
		put_file(&block, formats[i], format_sizes[i]);
	put_u32(&block, 0); /* kallsyms: perf reads the machine's own */
	put_u32(&block, 0); /* printk formats */
	put_u64(&block, 0); /* saved command lines */
	*size = block.size;
	return block.bytes;
}

bool perf_sched_switch_parse(const uint8_t *raw, size_t size, struct perf_sched_switch *fields)
{
	/* common fields (8 bytes), prev_comm[16], prev_pid, prev_prio,
	 * long prev_state, next_comm[16], next_pid, next_prio: 64 bytes. */
	if (!raw || size < 64)
		return false;
	memcpy(fields->prev_comm, raw + 8, 15);
	fields->prev_comm[15] = '\0';
	memcpy(&fields->prev_pid, raw + 24, 4);
	memcpy(&fields->prev_prio, raw + 28, 4);
	memcpy(&fields->prev_state, raw + 32, 8);
	memcpy(fields->next_comm, raw + 40, 15);
	fields->next_comm[15] = '\0';
	memcpy(&fields->next_pid, raw + 56, 4);
	memcpy(&fields->next_prio, raw + 60, 4);
	return true;
}
