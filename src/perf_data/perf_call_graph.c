#include "perf_call_graph.h"
#include "perf_records.h"
#include "perf_user_registers.h"

#include <string.h>

/* The fp mode's stack copy: the leaf's return address lies its frame size
 * above the stack pointer; docs/BENCHMARKS.md shows what this covers. */
enum { LEAF_REPAIR_STACK_SIZE = 512 };

static const char *const names[] = {
    [CALL_GRAPH_FP] = "fp",
    [CALL_GRAPH_DWARF] = "dwarf",
    [CALL_GRAPH_HYBRID] = "hybrid",
};

bool call_graph_parse(const char *text, enum call_graph_mode *mode)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(text, names[i])) {
			*mode = (enum call_graph_mode)i;
			return true;
		}
	return false;
}

const char *call_graph_name(enum call_graph_mode mode)
{
	return names[mode];
}

void call_graph_set_attr(struct perf_event_attr *attr, enum call_graph_mode mode,
			 unsigned stack_size)
{
	attr->sample_type = PROFCPU_SAMPLE_TYPE;
	attr->sample_stack_user = LEAF_REPAIR_STACK_SIZE;
	attr->sample_regs_user = 0;
	attr->exclude_callchain_user = 0;
	attr->mmap_data = 0;
	if (mode == CALL_GRAPH_FP)
		return;
	/* perf's DWARF unwinders find .eh_frame_hdr through the read-only
	 * segment's mapping. */
	attr->mmap_data = 1;
	attr->sample_type |= PERF_SAMPLE_REGS_USER;
	attr->sample_regs_user = perf_user_registers;
	attr->sample_stack_user = stack_size;
	attr->exclude_callchain_user = mode == CALL_GRAPH_DWARF;
}

enum call_graph_mode call_graph_of_attr(const struct perf_event_attr *attr)
{
	if (!(attr->sample_type & PERF_SAMPLE_REGS_USER) ||
	    !(attr->sample_type & PERF_SAMPLE_STACK_USER))
		return CALL_GRAPH_FP;
	return attr->exclude_callchain_user ? CALL_GRAPH_DWARF : CALL_GRAPH_HYBRID;
}
