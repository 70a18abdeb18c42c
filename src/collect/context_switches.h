/* Off-CPU time without tracefs: the software event
 * PERF_COUNT_SW_CONTEXT_SWITCHES, sampled on every switch, takes the stack
 * of each thread as it leaves the CPU, and the kernel's switch records
 * (PERF_RECORD_SWITCH, attr.context_switch) say when it comes back and,
 * with PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, whether it was preempted or
 * blocked. It needs no tracefs and no more privilege than sampling: it
 * works in a container, whose /sys has no tracefs. */
#ifndef PROFCPU_CONTEXT_SWITCHES_H
#define PROFCPU_CONTEXT_SWITCHES_H

#include <linux/perf_event.h>

#define CONTEXT_SWITCHES_EVENT_NAME "context-switches"

/* Sets `attr` to the software event with the stack fields of `sampling`
 * (the on-CPU event's attr), a sample on every switch and the kernel's
 * switch records. Adds PERF_SAMPLE_IDENTIFIER to both attrs, so a reader
 * tells their samples apart. */
void context_switches_attr(struct perf_event_attr *sampling, struct perf_event_attr *attr);

#endif
