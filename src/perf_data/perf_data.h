/* perf.data: the capture file of Linux perf, as described in the Linux tree's
 * tools/perf/Documentation/perf.data-file-format.txt, readable by the real
 * `perf script -i` and `perf report -i`.
 *
 * The writer stores records exactly as the kernel delivers them (or as
 * synthesized in the same layout), zstd-compressed in PERF_RECORD_COMPRESSED
 * records as `perf record -z` does when asked. The reader reads profcpu's own
 * captures and those of the real `perf record`, and treats the file as
 * untrusted: a truncated or malformed file is an error, never a crash. */
#ifndef PROFCPU_PERF_DATA_H
#define PROFCPU_PERF_DATA_H

#include "perf_records.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the feature sections say about the recording. */
struct perf_data_info {
	const char *event_name;		      /* HEADER_EVENT_DESC, e.g. "cpu-clock" */
	const char *hostname;		      /* HEADER_HOSTNAME */
	const char *os_release;		      /* HEADER_OSRELEASE */
	const char *arch;		      /* HEADER_ARCH */
	const char *perf_version;	      /* HEADER_VERSION */
	const char *command_line;	      /* HEADER_CMDLINE, one string */
	uint32_t cpus_online, cpus_available; /* HEADER_NRCPUS */
	/* The ids the kernel gave the event (PERF_EVENT_IOC_ID), one per
	 * opened file descriptor; stored with the attr and in
	 * HEADER_EVENT_DESC. Optional: with a single event perf needs none. */
	const uint64_t *event_ids;
	size_t event_id_count;
};
/* The writer fills NULL strings and zero CPU counts from uname(2) and
 * sysconf(3); perf_version defaults to "profcpu <version>". */

struct perf_data_writer;

/* Creates `path` for records of the single event `attr`. NULL with errno set
 * on failure. */
struct perf_data_writer *perf_data_writer_create(const char *path,
						 const struct perf_event_attr *attr,
						 const struct perf_data_info *info, bool compress);

/* Appends one record; the record's header.size says how long it is.
 * Returns 0, or -1 with errno set (e.g. ENOSPC: what was written stays
 * readable once perf_data_writer_finish() has run). After a write error
 * every later call fails with the same errno. perf sorts records by time
 * between PERF_RECORD_FINISHED_ROUND records (a bare header the caller may
 * add after each pass over the ring buffers), or over the whole file
 * without them. */
int perf_data_writer_add(struct perf_data_writer *writer, const struct perf_event_header *record);

/* Writes the records added so far to the file (compressing the ones not yet
 * compressed), so that a crash or a full disk later loses none of them.
 * Returns 0, or -1 with errno set, as perf_data_writer_add(). */
int perf_data_writer_flush(struct perf_data_writer *writer);

/* Flushes, writes the file header and feature sections, closes the file and
 * frees the writer. On a full disk the feature sections still fit (room for
 * them is reserved at creation, in PATH.reserve), so the file stays
 * readable by perf. Returns 0, or -1 with errno set. */
int perf_data_writer_finish(struct perf_data_writer *writer);

struct perf_data_reader;

/* Opens and validates `path`. On failure returns NULL and puts a one-line
 * reason in `error`. */
struct perf_data_reader *perf_data_reader_open(const char *path, char *error, size_t error_size);
void perf_data_reader_close(struct perf_data_reader *reader);

size_t perf_data_reader_event_count(const struct perf_data_reader *reader);
const struct perf_event_attr *perf_data_reader_attr(const struct perf_data_reader *reader,
						    size_t event);
/* The event's name from HEADER_EVENT_DESC, or one derived from its attr. */
const char *perf_data_reader_event_name(const struct perf_data_reader *reader, size_t event);

/* Calls `visit` for each record of the data section in file order, with
 * PERF_RECORD_COMPRESSED records expanded into the records they hold. Stops
 * when `visit` returns non-zero and returns that value; returns -1 with a
 * reason in `error` for a malformed file, 0 at the end. The record given to
 * `visit` is 8-byte aligned and valid only during the call. A file whose
 * header has no data size (perf killed before it wrote one) is read to its
 * end, where a cut-short last record is ignored rather than an error. */
int perf_data_reader_for_each(struct perf_data_reader *reader,
			      int (*visit)(const struct perf_event_header *record, void *context),
			      void *context, char *error, size_t error_size);

/* Whether perf_data_reader_for_each() met zstd-compressed records (profcpu
 * collect's default, `perf record -z`): the file is compressed already. */
bool perf_data_reader_saw_compressed(const struct perf_data_reader *reader);

/* A decoded PERF_RECORD_SAMPLE. Fields the event did not record are 0. */
struct perf_sample {
	size_t event; /* index of the event (attr) that recorded it */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint64_t callchain_length;
	const uint64_t *callchain; /* points into the record */
	/* PERF_SAMPLE_REGS_USER: the registers of user_register_mask (the
	 * attr's sample_regs_user), in bit order; NULL when the sample has none
	 * (a kernel thread's). Read them with perf_sample_user_register(). */
	const uint64_t *user_registers;
	uint64_t user_register_mask;
	/* PERF_SAMPLE_STACK_USER: the bytes the kernel could copy from the
	 * user stack pointer up (dyn_size, never more than the record holds). */
	const uint8_t *user_stack;
	uint64_t user_stack_size;
};

/* Decodes a PERF_RECORD_SAMPLE, which must be 8-byte aligned (as
 * perf_data_reader_for_each() gives it) since `callchain` and `user_stack`
 * point into it. Returns false if it is malformed or its id names
 * no event of the file. */
bool perf_data_reader_parse_sample(const struct perf_data_reader *reader,
				   const struct perf_event_header *record,
				   struct perf_sample *sample);

/* Copies the PERF_RECORD_SAMPLE `record` of an event with `attr`, whose
 * user stack copy is its last field, into `out` (room for record->size
 * bytes, 8-byte aligned) without the part of that copy the kernel did not
 * fill (past dyn_size: whatever the ring buffer held before). Returns the
 * copy's size, or 0 when there is nothing to drop or the record is not such
 * a sample of `attr` (another event's sample is left as it is). */
size_t perf_sample_trim_user_stack(const struct perf_event_attr *attr,
				   const struct perf_event_header *record, void *out);

/* The user register numbered `perf_register` (PERF_REG_X86_IP, ... of
 * <asm/perf_regs.h>) of a parsed sample. False when the sample has not
 * recorded it. */
bool perf_sample_user_register(const struct perf_sample *sample, unsigned perf_register,
			       uint64_t *value);

/* The time of any record: a sample's, or a side record's sample_id trailer.
 * Returns false if the record carries no time. */
bool perf_data_reader_record_time(const struct perf_data_reader *reader,
				  const struct perf_event_header *record, uint64_t *time);

#endif
