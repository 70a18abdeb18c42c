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

bool agent_selection_takes(const struct agent_selection *selection, const struct pod_labels *labels)
{
	return included(&selection->namespaces, labels->namespace) &&
	       included(&selection->pods, labels->pod) &&
	       included(&selection->containers, labels->container) &&
	       !matches_one(&selection->exclude_namespaces, labels->namespace) &&
	       !matches_one(&selection->exclude_pods, labels->pod) &&
	       !matches_one(&selection->exclude_containers, labels->container);
}

void agent_selection_release(struct agent_selection *selection)
{
	string_list_clear(&selection->namespaces);
	string_list_clear(&selection->pods);
	string_list_clear(&selection->containers);
	string_list_clear(&selection->exclude_namespaces);
	string_list_clear(&selection->exclude_pods);
	string_list_clear(&selection->exclude_containers);
}
