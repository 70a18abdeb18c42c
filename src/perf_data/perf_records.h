/* Layouts of the perf records profcpu reads and writes, as the kernel lays
 * them out in the ring buffer and perf stores them in perf.data (see
 * include/uapi/linux/perf_event.h, whose enum names the types but leaves the
 * bodies to comments). Every non-sample record is followed by a sample_id
 * trailer when attr.sample_id_all is set. */
#ifndef PROFCPU_PERF_RECORDS_H
#define PROFCPU_PERF_RECORDS_H

#include <linux/perf_event.h>
#include <stdint.h>

/* perf's own record types, found in perf.data files only. */
enum {
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_COMPRESSED = 81,
};

struct perf_record_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t address, length, page_offset;
	uint32_t major, minor;
	uint64_t inode, inode_generation;
	uint32_t protection, flags;
	char filename[]; /* NUL-terminated, padded to 8 bytes */
};

struct perf_record_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t address, length, page_offset;
	char filename[];
};

struct perf_record_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[]; /* NUL-terminated, padded to 8 bytes */
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
struct perf_record_task {
	struct perf_event_header header;
	uint32_t pid, parent_pid, tid, parent_tid;
	uint64_t time;
};

struct perf_record_lost {
	struct perf_event_header header;
	uint64_t id, lost;
};

/* Receives one record; returns 0, or -1 to stop. */
typedef int (*record_sink)(const struct perf_event_header *record, void *context);

/* The sample fields every profcpu capture records, in the kernel's order:
 * PERF_SAMPLE_IP | TID | TIME | CPU | PERIOD | CALLCHAIN and a copy of the
 * top of the user stack (STACK_USER). The call-graph mode adds to them
 * (perf_call_graph.h). */
#define PROFCPU_SAMPLE_TYPE                                                                        \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |                   \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)

#endif
