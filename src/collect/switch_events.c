#include "switch_events.h"

#include "context_switches.h"
#include "sched_switch.h"
#include "util.h"

#include <string.h>

void switch_events_choose(struct perf_event_attr *sampling, bool per_thread,
			  struct switch_events *chosen)
{
	/* The tracepoint where it opens: it also names the thread taking the
	 * CPU and the exact state of the one leaving (docs/OFF_CPU.md). */
	chosen->tracepoint = sched_switch_attr(sampling, per_thread, &chosen->attr);
	if (chosen->tracepoint) {
		chosen->name = SCHED_SWITCH_EVENT_NAME;
		return;
	}
	context_switches_attr(sampling, &chosen->attr);
	chosen->name = CONTEXT_SWITCHES_EVENT_NAME;
}

uint8_t *switch_events_tracing_data(const struct switch_events *chosen, size_t *size)
{
	*size = 0;
	return chosen->tracepoint ? sched_switch_tracing_data(size) : NULL;
}

void switch_events_explain_open_error(const struct perf_event_attr *attr, int error)
{
	if (attr->type == PERF_TYPE_TRACEPOINT)
		sched_switch_explain_open_error(error);
	else
		report_error("cannot record context switches (the software event "
			     "context-switches): perf_event_open: %s; collect without off-CPU time",
			     strerror(error));
}
