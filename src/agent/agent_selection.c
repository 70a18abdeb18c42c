#include "agent_selection.h"

#include <fnmatch.h>

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
	       included(&selection->containers, labels->container) &&
	       !matches_one(&selection->exclude_namespaces, labels->namespace) &&
	       !matches_one(&selection->exclude_pods, labels->pod) &&
	       !matches_one(&selection->exclude_containers, labels->container);
}

bool agent_selection_refuses_container_files(const struct agent_selection *selection,
					     const struct pod_labels *labels)
{
	struct agent_selection trusting = *selection;

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
