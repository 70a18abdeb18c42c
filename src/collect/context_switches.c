#include "context_switches.h"

#include "switch_stack.h"

void context_switches_attr(struct perf_event_attr *sampling, struct perf_event_attr *attr)
{
	sampling->sample_type |= PERF_SAMPLE_IDENTIFIER;
	*attr = *sampling;
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->freq = 0;
	attr->sample_period = 1;
	/* Per thread: a record when the thread leaves and when it returns;
	 * per CPU: one for every switch there, naming the other thread. */
	attr->context_switch = 1;
	switch_stack_limit(attr);
}
