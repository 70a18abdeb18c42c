/* How off-CPU time (--off-cpu, perfcollect's -threadtime) is recorded:
 * every time a thread of the target leaves a CPU, with its stack as a
 * sample has it, and when it comes back. Two routes give that: the
 * scheduler's tracepoint sched:sched_switch where tracefs is readable
 * (sched_switch.h), else the software event PERF_COUNT_SW_CONTEXT_SWITCHES
 * with the kernel's switch records (context_switches.h), which needs no
 * tracefs: the one that works in a container. docs/OFF_CPU.md compares
 * them. */
#ifndef PROFCPU_SWITCH_EVENTS_H
#define PROFCPU_SWITCH_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct switch_events {
	struct perf_event_attr attr;
	const char *name; /* as perf names it: "sched:sched_switch", "context-switches" */
	bool tracepoint;
};

/* Chooses the route and sets its attr from `sampling` (the on-CPU event's
 * attr, to which PERF_SAMPLE_IDENTIFIER is added). `per_thread`: the
 * events are opened per thread of one process rather than per CPU. */
void switch_events_choose(struct perf_event_attr *sampling, bool per_thread,
			  struct switch_events *chosen);

/* perf's HEADER_TRACING_DATA for the tracepoint route, malloc'd; NULL for
 * the software event, which needs none, or when tracefs cannot be read. */
uint8_t *switch_events_tracing_data(const struct switch_events *chosen, size_t *size);

/* One line saying why the kernel refused the switch event with `attr`
 * (`error`: errno of perf_event_open) and what to do. */
void switch_events_explain_open_error(const struct perf_event_attr *attr, int error);

#endif
