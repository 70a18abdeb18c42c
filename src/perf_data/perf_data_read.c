/* Opening a perf.data file: the header, the attrs and their ids, the data
 * section's bounds and the event names. The file is mapped, not read, so
 * captures of a few GB cost address space rather than memory. */
#include "perf_data_reader_internal.h"

#include "perf_data_format.h"
#include "perf_event_names.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds that no real file comes near, so that hostile counts cannot make
 * the reader allocate without limit. */
#define MAX_EVENTS    4096
#define MAX_ATTR_SIZE 4096
#define MAX_IDS	      (1 << 22)

static bool section_fits(const struct perf_data_reader *reader,
			 const struct perf_file_section *section)
{
	return section->offset <= reader->file_size &&
	       section->size <= reader->file_size - section->offset;
}

static bool feature_is_set(const struct perf_file_header *header, int feature)
{
	return header->features[feature / 64] & (1ULL << (feature % 64));
}

static size_t feature_count(const struct perf_file_header *header)
{
	size_t count = 0;

	for (int feature = 0; feature < HEADER_FEATURE_BITS; feature++)
		count += feature_is_set(header, feature);
	return count;
}

/* The table of feature sections that starts at `offset`, if it lies
 * in the file and its sections lie after it in the file. */
static const uint8_t *feature_table_at(const struct perf_data_reader *reader,
				       const struct perf_file_header *header, uint64_t offset)
{
	size_t count = feature_count(header);
	uint64_t table_end = offset + count * sizeof(struct perf_file_section);
	struct perf_file_section section;

	if (!count || offset > reader->file_size || table_end > reader->file_size)
		return NULL;
	for (size_t i = 0; i < count; i++) {
		memcpy(&section, reader->file + offset + i * sizeof(section), sizeof(section));
		if (section.offset < table_end || !section_fits(reader, &section))
			return NULL;
	}
	return reader->file + offset;
}

/* The section of `feature`, or false if the file has none. */
static bool find_feature(const struct perf_data_reader *reader,
			 const struct perf_file_header *header, int feature,
			 struct perf_file_section *section)
{
	const uint8_t *table;
	size_t index = 0;

	if (reader->data_runs_to_end || !feature_is_set(header, feature))
		return false;
	table = feature_table_at(reader, header, reader->data_offset + reader->data_size);
	if (!table)
		return false;
	for (int before = 0; before < feature; before++)
		index += feature_is_set(header, before);
	memcpy(section, table + index * sizeof(*section), sizeof(*section));
	return true;
}

/* HEADER_CLOCK_DATA, when it speaks of the clock the events use. */
static void read_clock_data(struct perf_data_reader *reader, const struct perf_file_header *header)
{
	struct perf_file_section section;
	struct perf_clock_data clock;
	const struct perf_event_attr *attr = &reader->events[0].attr;

	if (!reader->event_count || !attr->use_clockid ||
	    !find_feature(reader, header, HEADER_CLOCK_DATA, &section) ||
	    section.size < sizeof(clock) || section.offset > reader->file_size ||
	    reader->file_size - section.offset < sizeof(clock))
		return;
	memcpy(&clock, reader->file + section.offset, sizeof(clock));
	if (clock.version < PERF_CLOCK_DATA_VERSION || clock.clockid != (uint32_t)attr->clockid)
		return;
	reader->has_wall_clock = true;
	reader->wall_clock_offset = (int64_t)(clock.wall_clock_ns - clock.clockid_time_ns);
}

bool perf_data_reader_wall_clock_offset(const struct perf_data_reader *reader, int64_t *offset)
{
	*offset = reader->wall_clock_offset;
	return reader->has_wall_clock;
}

static int check_header(struct perf_data_reader *reader, struct perf_file_header *header,
			char *error, size_t error_size)
{
	static const char old_magic[8] = "PERFFILE";

	if (reader->file_size < sizeof(header->magic))
		return perf_data_set_error(error, error_size, "not a perf.data file (too short)");
	memcpy(&header->magic, reader->file, sizeof(header->magic));
	if (header->magic == __builtin_bswap64(PERF_DATA_MAGIC))
		return perf_data_set_error(error, error_size,
					   "perf.data from a machine of the other byte order");
	if (!memcmp(reader->file, old_magic, sizeof(old_magic)))
		return perf_data_set_error(error, error_size,
					   "perf.data version 1 is not supported");
	if (header->magic != PERF_DATA_MAGIC)
		return perf_data_set_error(error, error_size, "not a perf.data file (bad magic)");
	if (reader->file_size >= 16)
		memcpy(&header->size, reader->file + 8, sizeof(header->size));
	if (reader->file_size >= 16 && header->size == PERF_PIPE_HEADER_SIZE)
		return perf_data_set_error(error, error_size,
					   "pipe-mode perf.data is not supported (convert it with "
					   "`perf inject -i FILE -o NEWFILE`)");
	if (reader->file_size < sizeof(*header))
		return perf_data_set_error(error, error_size, "perf.data header is truncated");
	memcpy(header, reader->file, sizeof(*header));
	if (header->size < sizeof(*header) || header->size > reader->file_size)
		return perf_data_set_error(error, error_size, "bad perf.data header size %llu",
					   (unsigned long long)header->size);
	return 0;
}

static int read_attrs(struct perf_data_reader *reader, const struct perf_file_header *header,
		      char *error, size_t error_size)
{
	size_t attr_bytes;

	if (header->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perf_file_section) ||
	    header->attr_size > MAX_ATTR_SIZE || !section_fits(reader, &header->attrs) ||
	    header->attrs.size % header->attr_size)
		return perf_data_set_error(error, error_size,
					   "bad attr section in perf.data header");
	reader->event_count = header->attrs.size / header->attr_size;
	if (!reader->event_count || reader->event_count > MAX_EVENTS)
		return perf_data_set_error(error, error_size, "perf.data has %zu events",
					   reader->event_count);
	reader->events = xcalloc(reader->event_count, sizeof(*reader->events));
	attr_bytes = header->attr_size - sizeof(struct perf_file_section);
	if (attr_bytes > sizeof(struct perf_event_attr))
		attr_bytes = sizeof(struct perf_event_attr);
	for (size_t i = 0; i < reader->event_count; i++) {
		const uint8_t *entry = reader->file + header->attrs.offset + i * header->attr_size;
		struct perf_file_section ids;

		memcpy(&reader->events[i].attr, entry, attr_bytes);
		memcpy(&ids, entry + header->attr_size - sizeof(ids), sizeof(ids));
		if (!section_fits(reader, &ids) || ids.size % sizeof(uint64_t))
			return perf_data_set_error(error, error_size, "bad id section of event %zu",
						   i);
		if (ids.size / sizeof(uint64_t) > MAX_IDS - reader->id_count)
			return perf_data_set_error(error, error_size, "perf.data has too many ids");
		reader->ids =
		    xrealloc(reader->ids, (reader->id_count + ids.size / sizeof(uint64_t)) *
					      sizeof(*reader->ids));
		for (size_t j = 0; j < ids.size / sizeof(uint64_t); j++) {
			memcpy(&reader->ids[reader->id_count].id,
			       reader->file + ids.offset + j * sizeof(uint64_t), sizeof(uint64_t));
			reader->ids[reader->id_count++].event = i;
		}
	}
	return 0;
}

static int compare_ids(const void *left, const void *right)
{
	const struct perf_data_event_id *a = left, *b = right;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* Where the event id sits in samples and trailers: perf requires every
 * event of a file to put it in the same place. */
static int find_sample_id_layout(struct perf_data_reader *reader, char *error, size_t error_size)
{
	uint64_t type = reader->events[0].attr.sample_type;

	reader->sample_id_index = reader->trailer_id_index_from_end = -1;
	if (type & PERF_SAMPLE_IDENTIFIER) {
		reader->sample_id_index = 0;
		reader->trailer_id_index_from_end = 0;
	} else if (type & PERF_SAMPLE_ID) {
		reader->sample_id_index = !!(type & PERF_SAMPLE_IP) + !!(type & PERF_SAMPLE_TID) +
					  !!(type & PERF_SAMPLE_TIME) + !!(type & PERF_SAMPLE_ADDR);
		reader->trailer_id_index_from_end =
		    !!(type & PERF_SAMPLE_STREAM_ID) + !!(type & PERF_SAMPLE_CPU);
	}
	if (reader->event_count == 1)
		return 0;
	if (reader->sample_id_index < 0)
		return perf_data_set_error(error, error_size,
					   "perf.data has %zu events but its samples carry no id",
					   reader->event_count);
	for (size_t i = 1; i < reader->event_count; i++) {
		uint64_t other = reader->events[i].attr.sample_type;
		uint64_t layout = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID;

		if (!(type & PERF_SAMPLE_IDENTIFIER))
			layout |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_ADDR | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
		if ((type & layout) != (other & layout))
			return perf_data_set_error(error, error_size,
						   "perf.data events put their ids in different "
						   "places");
	}
	if (reader->id_count > 1)
		qsort(reader->ids, reader->id_count, sizeof(*reader->ids), compare_ids);
	return 0;
}

static int find_data(struct perf_data_reader *reader, const struct perf_file_header *header,
		     char *error, size_t error_size)
{
	reader->data_offset = header->data.offset;
	reader->data_size = header->data.size;
	if (!section_fits(reader, &header->data))
		return perf_data_set_error(error, error_size,
					   "perf.data is truncated: its data section ends past "
					   "the end of the file");
	/* perf writes the size at the end; a zero size with no feature table
	 * where it belongs is a recording that never ended. */
	if (!reader->data_size && !feature_table_at(reader, header, reader->data_offset)) {
		reader->data_runs_to_end = true;
		reader->data_size = reader->file_size - reader->data_offset;
	}
	return 0;
}

static void name_events(struct perf_data_reader *reader)
{
	for (size_t i = 0; i < reader->event_count; i++) {
		const struct perf_event_attr *attr = &reader->events[i].attr;
		const char *name = perf_event_name_from_attr(attr);

		if (reader->events[i].name)
			continue;
		reader->events[i].name = name ? xstrdup(name)
					      : xasprintf("type %u config %#llx", attr->type,
							  (unsigned long long)attr->config);
	}
}

static int read_header(struct perf_data_reader *reader, char *error, size_t error_size)
{
	struct perf_file_header header = {0};
	struct perf_file_section section;

	if (check_header(reader, &header, error, error_size) < 0 ||
	    read_attrs(reader, &header, error, error_size) < 0 ||
	    find_sample_id_layout(reader, error, error_size) < 0 ||
	    find_data(reader, &header, error, error_size) < 0)
		return -1;
	if (find_feature(reader, &header, HEADER_EVENT_DESC, &section) &&
	    perf_data_read_event_names(reader, reader->file + section.offset, section.size, error,
				       error_size) < 0)
		return -1;
	name_events(reader);
	read_clock_data(reader, &header);
	if (find_feature(reader, &header, HEADER_TRACING_DATA, &section)) {
		reader->tracing_data = reader->file + section.offset;
		reader->tracing_data_size = section.size;
	}
	return 0;
}

struct perf_data_reader *perf_data_reader_open(const char *path, char *error, size_t error_size)
{
	struct perf_data_reader *reader = xcalloc(1, sizeof(*reader));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat status;
	void *mapping;

	if (fd < 0 || fstat(fd, &status) < 0) {
		perf_data_set_error(error, error_size, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(status.st_mode) || status.st_size == 0) {
		perf_data_set_error(error, error_size, "%s is %s", path,
				    S_ISREG(status.st_mode) ? "empty" : "not a regular file");
		goto fail;
	}
	mapping = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (mapping == MAP_FAILED) {
		perf_data_set_error(error, error_size, "cannot map %s: %s", path, strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	reader->file = mapping;
	reader->file_size = (size_t)status.st_size;
	if (read_header(reader, error, error_size) < 0)
		goto fail;
	return reader;
fail:
	if (fd >= 0)
		close(fd);
	perf_data_reader_close(reader);
	return NULL;
}

void perf_data_reader_close(struct perf_data_reader *reader)
{
	if (!reader)
		return;
	if (reader->file)
		munmap((void *)reader->file, reader->file_size);
	for (size_t i = 0; i < reader->event_count; i++)
		free(reader->events[i].name);
	free(reader->events);
	free(reader->ids);
	ZSTD_freeDCtx(reader->decompressor);
	free(reader->decompressed);
	free(reader->aligned_record);
	free(reader);
}

size_t perf_data_reader_event_count(const struct perf_data_reader *reader)
{
	return reader->event_count;
}

const struct perf_event_attr *perf_data_reader_attr(const struct perf_data_reader *reader,
						    size_t event)
{
	return event < reader->event_count ? &reader->events[event].attr : NULL;
}

uint64_t *perf_data_reader_event_ids(const struct perf_data_reader *reader, size_t event,
				     size_t *count)
{
	uint64_t *ids = xmalloc((reader->id_count + 1) * sizeof(*ids));

	*count = 0;
	for (size_t i = 0; i < reader->id_count; i++)
		if (reader->ids[i].event == event)
			ids[(*count)++] = reader->ids[i].id;
	return ids;
}

const uint8_t *perf_data_reader_tracing_data(const struct perf_data_reader *reader, size_t *size)
{
	*size = (size_t)reader->tracing_data_size;
	return reader->tracing_data;
}

const char *perf_data_reader_event_name(const struct perf_data_reader *reader, size_t event)
{
	return event < reader->event_count ? reader->events[event].name : NULL;
}
