/* What the agent pushes a profile with: its workload's series (service
 * name and labels), and a period's processes grouped by series. */
#ifndef PROFCPU_AGENT_SERIES_H
#define PROFCPU_AGENT_SERIES_H

#include "agent_processes.h"
#include "process_profiles.h"
#include "util.h"

#include <stddef.h>

/* A profile's series: its name, service name and labels. */
struct agent_labels {
	char *profile_name; /* Pyroscope's __name__; NULL: process_cpu */
	char *service;
	struct string_list labels; /* "key=value", malloc'd */
};

/* The series labels of `profile`, whose process is `process`: what names
 * its workload (service, namespace, pod, container, `node`, the user's
 * `extra` ones), not the process itself, so that a workload's processes
 * make one series however many come and go. Their pids and names are in
 * the profile. */
void agent_labels_make(const char *node, const struct string_list *extra,
		       const struct process_profile *profile, const struct agent_process *process,
		       struct agent_labels *labels);
void agent_labels_free(struct agent_labels *labels);

/* A period's series: the processes that share their labels. */
struct agent_series {
	struct agent_labels labels;
	size_t *members; /* indices of the period's processes */
	size_t member_count, member_capacity;
};

struct agent_series_list {
	struct agent_series *items;
	size_t count, capacity;
};

/* Adds process `index` with `labels` (taken) to its series, made when no
 * process had those labels yet. */
void agent_series_add(struct agent_series_list *list, size_t index, struct agent_labels *labels);
void agent_series_free(struct agent_series_list *list);

#endif
