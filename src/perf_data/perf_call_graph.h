/* How each call-graph mode is recorded, in the event's attr: what the
 * collector asks the kernel for and what the replay reads back from the
 * capture's attr.
 *
 *   fp      the kernel's frame-pointer callchain, as perf record -g, and the
 *           top 512 bytes of the user stack, from which the replay puts back
 *           the caller of a leaf that keeps no frame pointer. No
 *           PERF_SAMPLE_REGS_USER: with it, perf script would unwind the copy
 *           itself and append its frames under the callchain.
 *   dwarf   as perf record --call-graph dwarf: user registers and a copy of
 *           the user stack, the kernel's callchain for kernel frames only
 *           (exclude_callchain_user), the mappings of data too (mmap_data).
 *           perf script and perf report unwind these captures with their
 *           own DWARF unwinder.
 *   hybrid  the registers and stack copy of dwarf mode and the kernel's
 *           whole callchain, user frames included, which the walk joins
 *           where the copy ends (stack_walk.h). perf script reads these
 *           captures as dwarf ones, with the kernel's frame-pointer frames
 *           first (docs/UNWINDING.md). */
#ifndef PROFCPU_PERF_CALL_GRAPH_H
#define PROFCPU_PERF_CALL_GRAPH_H

#include <linux/perf_event.h>
#include <stdbool.h>

enum call_graph_mode { CALL_GRAPH_FP, CALL_GRAPH_DWARF, CALL_GRAPH_HYBRID };

/* The default stack copy of dwarf and hybrid modes, in bytes (chosen from
 * the table in docs/BENCHMARKS.md), and the largest the kernel takes: a
 * multiple of 8 below 64 KiB, as a record's size is a u16. */
#define CALL_GRAPH_DEFAULT_STACK_SIZE 16384
#define CALL_GRAPH_MAX_STACK_SIZE     65528

/* Parses "fp", "dwarf" or "hybrid". False for anything else. */
bool call_graph_parse(const char *text, enum call_graph_mode *mode);
const char *call_graph_name(enum call_graph_mode mode);

/* Sets the sample fields of `mode` in `attr`: sample_type, the user
 * registers and the user stack copy of `stack_size` bytes (dwarf and hybrid;
 * fp copies 512), exclude_callchain_user, mmap_data. */
void call_graph_set_attr(struct perf_event_attr *attr, enum call_graph_mode mode,
			 unsigned stack_size);

/* The mode a capture was recorded in, from its attr. */
enum call_graph_mode call_graph_of_attr(const struct perf_event_attr *attr);

#endif
