/* Which processes the agent profiles, by their pod labels (pod_labels.h):
 * --namespace, --pod, --container (names or shell globs, repeatable; a
 * process must match one of each kind given) and --exclude-namespace,
 * --exclude-pod, --exclude-container (a process that matches one is left
 * out). A container is given by its id (12 to 64 hex digits, also
 * kubectl's containerd://ID) or its name, as its runtime keeps it
 * (container_name.h); globs match the 12-digit id or the name. Without
 * any, every process.
 *
 * A namespace or pod read from files inside the container, which it may
 * have written, takes no process in (--namespace, --pod) unless
 * --trust-container-labels says so; it can still leave its own process
 * out (--exclude-*): a forged label then costs only the forger. */
#ifndef PROFCPU_AGENT_SELECTION_H
#define PROFCPU_AGENT_SELECTION_H

#include "pod_labels.h"
#include "util.h"

#include <stdbool.h>

struct agent_selection {
	struct string_list namespaces, pods, containers;
	struct string_list exclude_namespaces, exclude_pods, exclude_containers;
	bool trust_container_labels; /* --trust-container-labels */
	/* --container-state DIR: more folders of the runtimes' OCI configs
	 * (container_state.h), where the labels are read from first. */
	struct string_list state_folders;
};

/* Whether any option narrows the selection. */
bool agent_selection_narrows(const struct agent_selection *selection);

/* Whether a process with `labels` is profiled. */
bool agent_selection_takes(const struct agent_selection *selection,
			   const struct pod_labels *labels);

/* Whether the selection leaves out a process with `labels` only because
 * its namespace or pod came from files inside its container (for the log). */
bool agent_selection_refuses_container_files(const struct agent_selection *selection,
					     const struct pod_labels *labels);

/* Says in one line each --container that no running container matches now
 * (the selection stays: one may start later). */
void agent_selection_report_unmatched(const struct agent_selection *selection);

void agent_selection_release(struct agent_selection *selection);

#endif
