/* The executable mappings the side records announce (PERF_RECORD_MMAP2,
 * and PERF_RECORD_MMAP of user space), decoded for whoever follows a
 * process's code: the replay, and the collector's own walks. */
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

/* Copies the NUL-terminated string `field` of `record` into `out`, cut to
 * the record's end and to `out_size` - 1 bytes. */
void perf_record_copy_string(const struct perf_event_header *record, const char *field, char *out,
			     size_t out_size);

#endif
