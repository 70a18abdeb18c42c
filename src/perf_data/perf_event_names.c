#include "perf_event_names.h"

#include <stddef.h>

static const char *const hardware_names[] = {
    [PERF_COUNT_HW_CPU_CYCLES] = "cycles",
    [PERF_COUNT_HW_INSTRUCTIONS] = "instructions",
    [PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
    [PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
    [PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches",
    [PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
    [PERF_COUNT_HW_BUS_CYCLES] = "bus-cycles",
    [PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
    [PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
    [PERF_COUNT_HW_REF_CPU_CYCLES] = "ref-cycles",
};

static const char *const software_names[] = {
    [PERF_COUNT_SW_CPU_CLOCK] = "cpu-clock",
    [PERF_COUNT_SW_TASK_CLOCK] = "task-clock",
    [PERF_COUNT_SW_PAGE_FAULTS] = "page-faults",
    [PERF_COUNT_SW_CONTEXT_SWITCHES] = "context-switches",
    [PERF_COUNT_SW_CPU_MIGRATIONS] = "cpu-migrations",
    [PERF_COUNT_SW_PAGE_FAULTS_MIN] = "minor-faults",
    [PERF_COUNT_SW_PAGE_FAULTS_MAJ] = "major-faults",
    [PERF_COUNT_SW_ALIGNMENT_FAULTS] = "alignment-faults",
    [PERF_COUNT_SW_EMULATION_FAULTS] = "emulation-faults",
    [PERF_COUNT_SW_DUMMY] = "dummy",
    [PERF_COUNT_SW_BPF_OUTPUT] = "bpf-output",
};

const char *perf_event_name_from_attr(const struct perf_event_attr *attr)
{
	size_t hardware_count = sizeof(hardware_names) / sizeof(hardware_names[0]);
	size_t software_count = sizeof(software_names) / sizeof(software_names[0]);

	if (attr->type == PERF_TYPE_HARDWARE && attr->config < hardware_count)
		return hardware_names[attr->config];
	if (attr->type == PERF_TYPE_SOFTWARE && attr->config < software_count)
		return software_names[attr->config];
	return NULL;
}
