/* Records for what existed before sampling started, built the way perf
 * synthesizes them from /proc: a COMM per thread, an MMAP2 per executable
 * mapping, and an MMAP for the kernel image. Without them, samples in code
 * mapped before the start could not be named. Also the records that
 * describe anonymous code holding a .NET image's copy as the image's file
 * (copied_images.h). */
#ifndef PROFCPU_SYNTHESIZE_H
#define PROFCPU_SYNTHESIZE_H

#include "perf_records.h"

struct copied_images;

#include <stdbool.h>
#include <sys/types.h>

/* Emits the COMM records of `pid`'s threads and the MMAP2 records of its
 * executable mappings, and with `file_data` those of its other file
 * mappings too (as attr.mmap_data asks of the kernel: perf's DWARF unwinder
 * finds a library's .eh_frame_hdr in its read-only segment through them).
 * Records carry a sample_id trailer for PROFCPU_SAMPLE_TYPE with time 0. A
 * process that is gone has nothing to describe. Returns 0, or -1 when the
 * sink stopped. */
int synthesize_process(pid_t pid, bool file_data, record_sink sink, void *context);

/* Follows a record of anonymous code [start, end) of `pid` (the kernel's,
 * or one synthesized here): when it holds a .NET image's copy, MMAP2
 * records that describe it as the image's file (copied_images.h), each
 * ending with `trailer`, that record's sample_id (`trailer_size` bytes). Returns 0 (also when
 * it emits nothing), or -1 when the sink stopped. */
int synthesize_copied_image(pid_t pid, uint64_t start, uint64_t end, const void *trailer,
			    size_t trailer_size, struct copied_images *images, record_sink sink,
			    void *context);

/* synthesize_process() for every process in /proc. */
int synthesize_every_process(bool file_data, record_sink sink, void *context);

/* Emits the kernel's MMAP record ("[kernel.kallsyms]_text") when
 * /proc/kallsyms shows addresses. Returns 0 (also when it emits nothing), or
 * -1 when the sink stopped. */
int synthesize_kernel_mmap(record_sink sink, void *context);

#endif
