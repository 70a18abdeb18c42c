#include "perf_data_features.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	}
}

void perf_data_features_build(struct perf_data_features *features, uint64_t offset,
			      const struct perf_event_attr *attr, const struct perf_data_info *info,
			      const struct perf_compressed_description *compression)
{
	static const int all[] = {HEADER_TRACING_DATA, HEADER_HOSTNAME,	  HEADER_OSRELEASE,
				  HEADER_VERSION,      HEADER_ARCH,	  HEADER_NRCPUS,
				  HEADER_CMDLINE,      HEADER_EVENT_DESC, HEADER_CLOCKID,
				  HEADER_COMPRESSED};
	struct byte_buffer table = {0}, bodies = {0};
	size_t count = 0;

	memset(features, 0, sizeof(*features));
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if ((all[i] == HEADER_CLOCKID && !attr->use_clockid) ||
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
