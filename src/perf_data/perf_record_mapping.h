/* What the side records say of a process's code, decoded for whoever
 * follows it (the replay, and the collector's own walks), so that both
 * follow it alike: the executable mappings they announce (PERF_RECORD_MMAP2,
 * and PERF_RECORD_MMAP of user space), and the forks and execs that carry
 * mappings over or drop them. */
#ifndef PROFCPU_PERF_RECORD_MAPPING_H
#define PROFCPU_PERF_RECORD_MAPPING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_mapping {
	uint32_t pid;
	uint64_t address, length, page_offset;
	/* The file's device and inode; inode 0 when the record does not say
	 * them (an MMAP record, an MMAP2 that carries a build-id instead). */
	uint32_t major, minor;
	uint64_t inode;
	char path[4096];
};

/* Decodes `record` when it maps executable code of user space: false for
 * other records, data mappings, the kernel's own map (named by kallsyms
 * instead) and records too short for their type. */
bool perf_record_mapping(const struct perf_event_header *record, struct perf_mapping *mapping);

enum perf_process_change {
	PERF_PROCESS_UNCHANGED,
	PERF_PROCESS_FORKED, /* a new process, which starts with its parent's mappings */
	PERF_PROCESS_EXECED, /* its old mappings are gone */
};

/* Decodes `record` when it makes a process (PERF_RECORD_FORK of a new pid,
 * not a thread: `pid` and its `parent`) or says a process called exec()
 * (PERF_RECORD_COMM with the exec flag, of its main thread: `pid`). */
enum perf_process_change perf_record_process_change(const struct perf_event_header *record,
						    uint32_t *pid, uint32_t *parent);

/* How many 8-byte words end each side record (not a sample) of the event
 * `attr` describes: its sample_id trailer; 0 when it has none. */
size_t perf_record_trailer_words(const struct perf_event_attr *attr);

/* The time of `record`, of the event `attr` describes (or of one whose
 * samples start with the same fields): a sample's own, a side record's in
 * its sample_id trailer; false when it has none. */
bool perf_record_time(const struct perf_event_attr *attr, const struct perf_event_header *record,
		      uint64_t *time);

/* Copies the NUL-terminated string `field` of `record` into `out`, cut to
 * the record's end and to `out_size` - 1 bytes. */
void perf_record_copy_string(const struct perf_event_header *record, const char *field, char *out,
			     size_t out_size);

#endif
