/* What an event recording threads leaving the CPU (switch_events.h) keeps
 * of the sampling event's attr. */
#ifndef PROFCPU_SWITCH_STACK_H
#define PROFCPU_SWITCH_STACK_H

#include <linux/perf_event.h>

/* Bytes of user stack copied with each switch. */
#define SWITCH_STACK_SIZE 8192

/* Caps `attr`'s user stack copy at SWITCH_STACK_SIZE and drops the side
 * records (mappings, names, forks), which come with the samples. */
void switch_stack_limit(struct perf_event_attr *attr);

#endif
