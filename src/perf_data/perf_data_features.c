#include "perf_data_features.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct byte_buffer {
	uint8_t *bytes;
	size_t size, capacity;
};

static void append(struct byte_buffer *buffer, const void *bytes, size_t size)
{
	grow_array((void **)&buffer->bytes, &buffer->capacity, buffer->size + size, 1);
	memcpy(buffer->bytes + buffer->size, bytes, size);
	buffer->size += size;
}

static void append_u32(struct byte_buffer *buffer, uint32_t value)
{
	append(buffer, &value, sizeof(value));
}

static void append_u64(struct byte_buffer *buffer, uint64_t value)
{
	append(buffer, &value, sizeof(value));
}

static void append_string(struct byte_buffer *buffer, const char *string)
{
	static const char padding[PERF_STRING_ALIGN];
	size_t length = strlen(string) + 1;
	size_t padded = (length + PERF_STRING_ALIGN - 1) / PERF_STRING_ALIGN * PERF_STRING_ALIGN;

	append_u32(buffer, (uint32_t)padded);
	append(buffer, string, length);
	append(buffer, padding, padded - length);
}

static void append_event(struct byte_buffer *buffer, const struct perf_event_attr *attr,
			 const char *name, const uint64_t *ids, size_t id_count)
{
	append(buffer, attr, sizeof(*attr));
	append_u32(buffer, (uint32_t)id_count);
	append_string(buffer, name);
	append(buffer, ids, id_count * sizeof(uint64_t));
}

/* The events' attrs, ids and names, as `perf evlist` and `perf report
 * --header-only` show them. */
static void append_event_description(struct byte_buffer *buffer, const struct perf_event_attr *attr,
				     const struct perf_data_info *info)
{
	append_u32(buffer, (uint32_t)(1 + info->more_event_count));
	append_u32(buffer, sizeof(*attr));
	append_event(buffer, attr, info->event_name, info->event_ids, info->event_id_count);
	for (size_t i = 0; i < info->more_event_count; i++)
		append_event(buffer, &info->more_events[i].attr, info->more_events[i].name,
			     info->more_events[i].ids, info->more_events[i].id_count);
}

/* A tracefs file in HEADER_TRACING_DATA: its u64 size, then its bytes. */
static void append_file(struct byte_buffer *buffer, const char *bytes, size_t size)
{
	append_u64(buffer, size);
	append(buffer, bytes, size);
}

/* HEADER_TRACING_DATA, as perf lays it out (tools/perf/util/trace-event-info.c
 * in the Linux tree): what perf script needs to print a tracepoint's fields
 * ("prev_comm=... ==> next_comm=..."), read from tracefs at recording time. */
uint8_t *perf_data_tracing_data_build(const char *header_page, size_t header_page_size,
				      const char *header_event, size_t header_event_size,
				      const char *system, const char *const *formats,
				      const size_t *format_sizes, size_t format_count, size_t *size)
{
	static const char magic[] = "\027\010\104tracing";
	static const char version[] = "0.6";
	const uint8_t little_endian = 0, long_size = sizeof(long);
	struct byte_buffer data = {0};

	append(&data, magic, sizeof(magic) - 1);
	append(&data, version, sizeof(version));
	append(&data, &little_endian, 1);
	append(&data, &long_size, 1);
	append_u32(&data, (uint32_t)sysconf(_SC_PAGESIZE));
	append(&data, "header_page", sizeof("header_page"));
	append_file(&data, header_page, header_page_size);
	append(&data, "header_event", sizeof("header_event"));
	append_file(&data, header_event, header_event_size);
	append_u32(&data, 0); /* ftrace's own events */
	append_u32(&data, 1); /* event systems */
	append(&data, system, strlen(system) + 1);
	append_u32(&data, (uint32_t)format_count);
	for (size_t i = 0; i < format_count; i++)
		append_file(&data, formats[i], format_sizes[i]);
	append_u32(&data, 0); /* kallsyms: perf reads the machine's own */
	append_u32(&data, 0); /* printk formats */
	append_u64(&data, 0); /* saved command lines */
	*size = data.size;
	return data.bytes;
}

/* HEADER_CLOCKID holds the clock's resolution in nanoseconds. */
static void append_clock_resolution(struct byte_buffer *buffer, clockid_t clock)
{
	struct timespec resolution = {0, 1};

	clock_getres(clock, &resolution);
	append_u64(buffer, (uint64_t)resolution.tv_sec * 1000000000 + (uint64_t)resolution.tv_nsec);
}

static void append_feature(const struct perf_event_attr *attr, const struct perf_data_info *info,
			   const struct perf_compressed_description *compression, int feature,
			   struct byte_buffer *body)
{
	switch (feature) {
	case HEADER_TRACING_DATA:
		append(body, info->tracing_data, info->tracing_data_size);
		break;
	case HEADER_HOSTNAME:
		append_string(body, info->hostname);
		break;
	case HEADER_OSRELEASE:
		append_string(body, info->os_release);
		break;
	case HEADER_VERSION:
		append_string(body, info->perf_version);
		break;
	case HEADER_ARCH:
		append_string(body, info->arch);
		break;
	case HEADER_NRCPUS:
		append_u32(body, info->cpus_available);
		append_u32(body, info->cpus_online);
		break;
	case HEADER_CMDLINE:
		append_u32(body, 1);
		append_string(body, info->command_line);
		break;
	case HEADER_EVENT_DESC:
		append_event_description(body, attr, info);
		break;
	case HEADER_CLOCKID:
		append_clock_resolution(body, (clockid_t)attr->clockid);
		break;
	case HEADER_COMPRESSED:
		append(body, compression, sizeof(*compression));
		break;
	case HEADER_CLOCK_DATA:
		append(body,
		       &(struct perf_clock_data){.version = PERF_CLOCK_DATA_VERSION,
						 .clockid = (uint32_t)attr->clockid,
						 .wall_clock_ns = info->wall_clock_ns,
						 .clockid_time_ns = info->clockid_time_ns},
		       sizeof(struct perf_clock_data));
		break;
	}
}

void perf_data_features_build(struct perf_data_features *features, uint64_t offset,
			      const struct perf_event_attr *attr, const struct perf_data_info *info,
			      const struct perf_compressed_description *compression)
{
	static const int all[] = {HEADER_TRACING_DATA, HEADER_HOSTNAME,	  HEADER_OSRELEASE,
				  HEADER_VERSION,      HEADER_ARCH,	  HEADER_NRCPUS,
				  HEADER_CMDLINE,      HEADER_EVENT_DESC, HEADER_CLOCKID,
				  HEADER_COMPRESSED,   HEADER_CLOCK_DATA};
	struct byte_buffer table = {0}, bodies = {0};
	size_t count = 0;

	memset(features, 0, sizeof(*features));
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (((all[i] == HEADER_CLOCKID || all[i] == HEADER_CLOCK_DATA) &&
		     !attr->use_clockid) ||
		    (all[i] == HEADER_COMPRESSED && !compression) ||
		    (all[i] == HEADER_TRACING_DATA && !info->tracing_data))
			continue;
		features->bitmap[all[i] / 64] |= 1ULL << (all[i] % 64);
		count++;
	}
	/* Body offsets are known once the table's size is. */
	offset += count * sizeof(struct perf_file_section);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct perf_file_section section = {.offset = offset + bodies.size};

		if (!(features->bitmap[all[i] / 64] & (1ULL << (all[i] % 64))))
			continue;
		append_feature(attr, info, compression, all[i], &bodies);
		section.size = offset + bodies.size - section.offset;
		append(&table, &section, sizeof(section));
	}
	append(&table, bodies.bytes, bodies.size);
	free(bodies.bytes);
	features->bytes = table.bytes;
	features->size = table.size;
}

void perf_data_features_free(struct perf_data_features *features)
{
	free(features->bytes);
	features->bytes = NULL;
}
