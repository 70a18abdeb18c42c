#include "agent_selection.h"
#include "container_name.h"
#include "target_process.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* Whether `value` matches one of `patterns`. */
static bool matches_one(const struct string_list *patterns, const char *value)
{
	for (size_t i = 0; i < patterns->count; i++)
		if (fnmatch(patterns->items[i], value, 0) == 0)
			return true;
	return false;
}

/* Taken by one kind: none given, or one matches. */
static bool included(const struct string_list *patterns, const char *value)
{
	return !patterns->count || matches_one(patterns, value);
}

/* Whether a --container pattern takes the container `id` (12 hex digits,
 * "" outside a container): by its id, also kubectl's containerd://ID of 64
 * hex digits or any prefix of at least 12, by a glob of its id, or by its
 * name (container_name.h). */
static bool container_pattern_takes(const char *pattern, const char *id)
{
	const char *scheme_end = strstr(pattern, "://");
	size_t length;

	if (scheme_end)
		pattern = scheme_end + 3;
	length = strlen(pattern);
	if (length >= 12 && strspn(pattern, "0123456789abcdef") == length)
		return strncmp(pattern, id, 12) == 0;
	return fnmatch(pattern, id, 0) == 0 || (id[0] && container_name_matches(id, pattern));
}

static bool container_matches_one(const struct string_list *patterns, const char *id)
{
	for (size_t i = 0; i < patterns->count; i++)
		if (container_pattern_takes(patterns->items[i], id))
			return true;
	return false;
}

bool agent_selection_narrows(const struct agent_selection *selection)
{
	return selection->namespaces.count || selection->pods.count ||
	       selection->containers.count || selection->exclude_namespaces.count ||
	       selection->exclude_pods.count || selection->exclude_containers.count;
}

/* Taken by one kind of the labels the selection may trust: none given,
 * or one matches a label not from the container's own files. */
static bool included_trusted(const struct agent_selection *selection,
			     const struct string_list *patterns, const char *value,
			     enum pod_label_source source)
{
	if (source == POD_LABEL_CONTAINER_FILES && !selection->trust_container_labels)
		return !patterns->count;
	return included(patterns, value);
}

bool agent_selection_takes(const struct agent_selection *selection, const struct pod_labels *labels)
{
	return included_trusted(selection, &selection->namespaces, labels->namespace,
				labels->namespace_source) &&
	       included_trusted(selection, &selection->pods, labels->pod, labels->pod_source) &&
	       (!selection->containers.count ||
		container_matches_one(&selection->containers, labels->container)) &&
	       !matches_one(&selection->exclude_namespaces, labels->namespace) &&
	       !matches_one(&selection->exclude_pods, labels->pod) &&
	       !container_matches_one(&selection->exclude_containers, labels->container);
}

void agent_selection_report_unmatched(const struct agent_selection *selection)
{
	struct process_entry *processes;
	size_t count = selection->containers.count ? target_process_list(&processes) : 0;
	bool *taken = xcalloc(selection->containers.count + 1, sizeof(*taken));
	char(*seen)[13] = xcalloc(count + 1, sizeof(*seen));
	size_t seen_count = 0;

	/* Each container once, however many processes it runs. */
	for (size_t i = 0; i < count; i++) {
		char id[13];
		bool known = false;

		if (!pod_labels_container_id(processes[i].pid, id))
			continue;
		for (size_t j = 0; j < seen_count && !known; j++)
			known = !strcmp(seen[j], id);
		if (known)
			continue;
		memcpy(seen[seen_count++], id, sizeof(id));
		for (size_t p = 0; p < selection->containers.count; p++)
			taken[p] =
			    taken[p] || container_pattern_takes(selection->containers.items[p], id);
	}
	for (size_t p = 0; p < selection->containers.count; p++)
		if (!taken[p])
			report_warning("--container %s: no running container has that id or name "
				       "(podman, CRI-O, containerd, docker) yet; its processes are "
				       "profiled once one does",
				       selection->containers.items[p]);
	if (selection->containers.count)
		free(processes);
	free(taken);
	free(seen);
}

bool agent_selection_refuses_container_files(const struct agent_selection *selection,
					     const struct pod_labels *labels)
{
	struct agent_selection trusting = *selection;

	if (selection->trust_container_labels || !pod_labels_from_container_files(labels))
		return false;
	trusting.trust_container_labels = true;
	return !agent_selection_takes(selection, labels) &&
	       agent_selection_takes(&trusting, labels);
}

void agent_selection_release(struct agent_selection *selection)
{
	string_list_clear(&selection->namespaces);
	string_list_clear(&selection->pods);
	string_list_clear(&selection->containers);
	string_list_clear(&selection->exclude_namespaces);
	string_list_clear(&selection->exclude_pods);
	string_list_clear(&selection->exclude_containers);
	string_list_clear(&selection->state_folders);
}
