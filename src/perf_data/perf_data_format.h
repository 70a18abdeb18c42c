/* The on-disk layout of perf.data shared by the writer and the reader
 * (tools/perf/Documentation/perf.data-file-format.txt in the Linux tree).
 * Everything is little-endian, as written on the machine that recorded. */
#ifndef PROFCPU_PERF_DATA_FORMAT_H
#define PROFCPU_PERF_DATA_FORMAT_H

#include <stdint.h>

/* "PERFILE2" read as a little-endian u64. */
#define PERF_DATA_MAGIC 0x32454c4946524550ULL

struct perf_file_section {
	uint64_t offset, size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;	    /* sizeof(struct perf_file_header) */
	uint64_t attr_size; /* size of one attrs entry: attr + its ids section */
	struct perf_file_section attrs, data, event_types;
	uint64_t features[4]; /* bitmap of HEADER_* sections after the data */
};

/* A pipe-mode file starts with just the magic and this size. */
#define PERF_PIPE_HEADER_SIZE 16

/* Feature bits; each set bit has a perf_file_section in the table that
 * starts right after the data section, in bit order. */
enum {
	HEADER_TRACING_DATA = 1,
	HEADER_HOSTNAME = 3,
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,
	HEADER_CMDLINE = 11,
	HEADER_EVENT_DESC = 12,
	HEADER_CLOCKID = 23,
	HEADER_COMPRESSED = 27,
	HEADER_CLOCK_DATA = 29,
	HEADER_FEATURE_BITS = 256,
};

/* Strings in feature sections: a u32 length, then the NUL-terminated text
 * padded with NULs to a multiple of this. */
#define PERF_STRING_ALIGN 64

/* HEADER_COMPRESSED body: everything u32. */
struct perf_compressed_description {
	uint32_t version, type, level, ratio, mmap_len;
};
#define PERF_COMPRESSION_ZSTD 1

/* HEADER_CLOCK_DATA body: one moment read on the wall clock and on the
 * samples' clock (attr.clockid), which dates every sample (perf script's
 * tod field). */
struct perf_clock_data {
	uint32_t version, clockid;
	uint64_t wall_clock_ns, clockid_time_ns;
};
#define PERF_CLOCK_DATA_VERSION 1

/* Record types of perf itself (>= PERF_RECORD_USER_TYPE_START) carry no
 * sample_id trailer. */
#define PERF_RECORD_USER_TYPE_START 64

/* A record's size lives in a u16. */
#define PERF_RECORD_MAX_SIZE 65535

#endif
