/* Names of perf events as perf spells them ("cpu-clock", "cycles"). */
#ifndef PROFCPU_PERF_EVENT_NAMES_H
#define PROFCPU_PERF_EVENT_NAMES_H

#include <linux/perf_event.h>

/* The name perf gives the event `attr` describes, or NULL for an event
 * without a fixed name (raw, tracepoint, other PMUs). */
const char *perf_event_name_from_attr(const struct perf_event_attr *attr);

#endif
