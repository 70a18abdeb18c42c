/* The scheduler's switch tracepoint, sched:sched_switch, recorded beside
 * the samples for off-CPU time (--off-cpu, perfcollect's -threadtime):
 * every time a thread leaves a CPU, with its stack as a sample has it. */
#ifndef PROFCPU_SCHED_SWITCH_H
#define PROFCPU_SCHED_SWITCH_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCHED_SWITCH_EVENT_NAME "sched:sched_switch"

/* Sets `attr` to the tracepoint with the stack fields of `sampling` (the
 * on-CPU event's attr: callchain, user registers and stack copy), its raw
 * fields, a sample on every switch, and, when `per_thread`, the kernel's
 * switch records (PERF_RECORD_SWITCH), which say when each thread comes
 * back: a per-thread tracepoint sees only its own threads leave. Adds
 * PERF_SAMPLE_IDENTIFIER to both attrs, so a reader tells their samples
 * apart. False, changing nothing, when the tracepoint's id cannot be read
 * (tracefs not mounted, as in every container, or not readable). */
bool sched_switch_attr(struct perf_event_attr *sampling, bool per_thread,
		       struct perf_event_attr *attr);

/* perf's HEADER_TRACING_DATA for the tracepoint (tracefs' header_page,
 * header_event and the event's format), malloc'd; NULL when tracefs cannot
 * be read. */
uint8_t *sched_switch_tracing_data(size_t *size);

/* One line saying why the kernel refused the tracepoint (`error`: errno of
 * perf_event_open) and what to do. */
void sched_switch_explain_open_error(int error);

#endif
