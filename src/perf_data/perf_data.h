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
	/* HEADER_CLOCK_DATA, with attr.use_clockid: one moment on the wall
	 * clock (Unix nanoseconds) and on the samples' clock. */
	uint64_t wall_clock_ns, clockid_time_ns;
	/* The ids the kernel gave the event (PERF_EVENT_IOC_ID), one per
	 * opened file descriptor; stored with the attr and in
	 * HEADER_EVENT_DESC. Optional: with a single event perf needs none. */
	const uint64_t *event_ids;
	size_t event_id_count;
	/* Events recorded beside the first (the attr given to the writer),
	 * such as the sched:sched_switch tracepoint; their samples and the
	 * first event's then carry PERF_SAMPLE_IDENTIFIER. */
	const struct perf_data_extra_event *more_events;
	size_t more_event_count;
	/* HEADER_TRACING_DATA, which perf needs to read tracepoint samples
	 * (perf_data_tracing_data_build()); NULL without tracepoints. */
	const uint8_t *tracing_data;
	size_t tracing_data_size;
};

struct perf_data_extra_event {
	struct perf_event_attr attr;
	const char *name; /* as perf names it: "sched:sched_switch" */
	const uint64_t *ids;
	size_t id_count;
};

/* The tracing data perf stores for tracepoint events, from the tracefs
 * files events/header_page and events/header_event and the format file of
 * each event of `system` (one system here: "sched"). Returns a malloc'd
 * block of *size bytes. */
uint8_t *perf_data_tracing_data_build(const char *header_page, size_t header_page_size,
				      const char *header_event, size_t header_event_size,
				      const char *system, const char *const *formats,
				      const size_t *format_sizes, size_t format_count,
				      size_t *size);
/* The writer fills NULL strings and zero CPU counts from uname(2) and
 * sysconf(3), a zero clock moment from clock_gettime(2) as it starts;
 * perf_version defaults to "profcpu <version>". */

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
/* The kernel's ids of event `event` (`*count` of them, malloc'd), as its
 * attr's id section lists them. */
uint64_t *perf_data_reader_event_ids(const struct perf_data_reader *reader, size_t event,
				     size_t *count);
/* HEADER_TRACING_DATA (within the file: valid while it is open), or NULL
 * when the file has none. */
const uint8_t *perf_data_reader_tracing_data(const struct perf_data_reader *reader, size_t *size);
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

/* Where the samples' clock puts Unix time: nanoseconds to add to a
 * record's time to date it. False when the file has no HEADER_CLOCK_DATA
 * for its events' clock (perf record without -k, older profcpu). */
bool perf_data_reader_wall_clock_offset(const struct perf_data_reader *reader, int64_t *offset);

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
	/* PERF_SAMPLE_RAW: a tracepoint's fields (NULL when not recorded). */
	const uint8_t *raw;
	uint32_t raw_size;
};

/* Decodes a PERF_RECORD_SAMPLE, which must be 8-byte aligned (as
 * perf_data_reader_for_each() gives it) since `callchain` and `user_stack`
 * point into it. Returns false if it is malformed or its id names
 * no event of the file. */
bool perf_data_reader_parse_sample(const struct perf_data_reader *reader,
				   const struct perf_event_header *record,
				   struct perf_sample *sample);

/* The fields of a sched:sched_switch tracepoint sample (its raw data), as
 * the kernel lays them out since Linux 4.x (events/sched/sched_switch/format):
 * the thread leaving the CPU and the one taking it. */
struct perf_sched_switch {
	char prev_comm[16], next_comm[16]; /* NUL-terminated here */
	int32_t prev_pid, prev_prio, next_pid, next_prio;
	int64_t prev_state; /* TASK_* bits: 0 running (preempted), 1 S, 2 D, ... */
};

/* Decodes a sched_switch sample's raw data. False if it is too short. */
bool perf_sched_switch_parse(const uint8_t *raw, size_t size, struct perf_sched_switch *fields);

/* Decodes `record` when it is a PERF_RECORD_SAMPLE of the event with
 * `attr` whose user stack copy, of the attr's size, is its last field.
 * False otherwise: another event's sample, fp mode, a malformed record. */
bool perf_sample_parse_with_stack(const struct perf_event_attr *attr,
				  const struct perf_event_header *record,
				  struct perf_sample *sample);

/* Copies `record`, decoded into `sample` by perf_sample_parse_with_stack(),
 * into `out` (room for record->size bytes, 8-byte aligned) with at most
 * `keep` bytes of its stack copy, and never the part the kernel did not fill
 * (past dyn_size: whatever the ring buffer held before). perf reads a copy
 * shorter than the attr's as its own. Returns the copy's size, or 0 when it
 * would drop nothing. */
size_t perf_sample_trim_user_stack(const struct perf_event_header *record,
				   const struct perf_sample *sample, uint64_t keep, void *out);

/* Copies `record`, decoded into `sample` by perf_sample_parse_with_stack()
 * with a callchain, into `out` (room for UINT16_MAX bytes, 8-byte aligned)
 * with the user part of its callchain, after PERF_CONTEXT_USER, replaced by
 * `frames` (leaf first, then return addresses, as the kernel's walk lays
 * them out), no user registers (ABI none, as for a kernel thread) and no
 * stack copy ({ u64 0; }, as the kernel writes a sample it could not copy).
 * Returns the new record's size, or 0 when it would not fit a record. */
size_t perf_sample_with_user_frames(const struct perf_event_header *record,
				    const struct perf_sample *sample, const uint64_t *frames,
				    size_t count, void *out);

/* The user registers of a parsed sample by their numbers (PERF_REG_X86_IP,
 * ... of <asm/perf_regs.h>): values[n] for each bit n of the mask returned,
 * 0 when the sample has none (a kernel thread's). */
uint64_t perf_sample_user_registers(const struct perf_sample *sample, uint64_t values[64]);

/* The time of any record: a sample's, or a side record's sample_id trailer.
 * Returns false if the record carries no time. */
bool perf_data_reader_record_time(const struct perf_data_reader *reader,
				  const struct perf_event_header *record, uint64_t *time);

/* The CPU of a side record, from its sample_id trailer. False when the
 * record carries none. */
bool perf_data_reader_record_cpu(const struct perf_data_reader *reader,
				 const struct perf_event_header *record, uint32_t *cpu);

/* The process and thread of a side record, from its sample_id trailer (a
 * PERF_RECORD_SWITCH: the thread switched in or out). False when the
 * record carries none. */
bool perf_data_reader_record_thread(const struct perf_data_reader *reader,
				    const struct perf_event_header *record, uint32_t *pid,
				    uint32_t *tid);

#endif
