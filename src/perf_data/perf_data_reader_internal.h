/* What the perf.data reader's parts share: the opened file and what its
 * header says. Not for use outside src/perf_data_read*.c. */
#ifndef PROFCPU_PERF_DATA_READER_INTERNAL_H
#define PROFCPU_PERF_DATA_READER_INTERNAL_H

#include "perf_data.h"

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

struct perf_data_event {
	struct perf_event_attr attr;
	char *name;
};

/* Maps a kernel event id to the index of the event it belongs to. */
struct perf_data_event_id {
	uint64_t id;
	size_t event;
};

struct perf_data_reader {
	const uint8_t *file; /* the whole file, mapped */
	size_t file_size;
	uint64_t data_offset, data_size;
	/* Set when the header gave no data size (perf was killed): the data
	 * runs to the end of the file and may end inside a record. */
	bool data_runs_to_end;
	struct perf_data_event *events;
	size_t event_count;
	struct perf_data_event_id *ids; /* sorted by id */
	size_t id_count;
	/* Where samples and sample_id trailers say which event they belong
	 * to, in u64s from the start of a sample's body and from the end of a
	 * trailer; -1 when they do not (only allowed with one event). */
	int sample_id_index, trailer_id_index_from_end;
	/* From HEADER_CLOCK_DATA: Unix time minus the records' time. */
	bool has_wall_clock;
	int64_t wall_clock_offset;
	/* HEADER_TRACING_DATA, within the mapped file; NULL: none. */
	const uint8_t *tracing_data;
	uint64_t tracing_data_size;
	/* Decompression of PERF_RECORD_COMPRESSED records. */
	ZSTD_DCtx *decompressor;
	uint8_t *decompressed; /* records decompressed but not yet visited */
	size_t decompressed_size;
	bool saw_compressed;	  /* a PERF_RECORD_COMPRESSED was read */
	uint64_t *aligned_record; /* a copy of a record that is not 8-aligned */
};

/* Formats a reason into `error` (which may be NULL); returns -1. */
int perf_data_set_error(char *error, size_t error_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Reads the names in HEADER_EVENT_DESC, if the file has one, into
 * reader->events[].name. Returns -1 with a reason if the section is
 * malformed. */
int perf_data_read_event_names(struct perf_data_reader *reader, const uint8_t *section,
			       uint64_t size, char *error, size_t error_size);

#endif
