#include "agent_series.h"
#include "pod_labels.h"

#include <stdlib.h>
#include <string.h>

static void add_label(struct agent_labels *labels, const char *key, const char *value)
{
	char *label = xasprintf("%s=%s", key, value);

	make_printable(label); /* a control character would end a line of the labels file */
	string_list_append(&labels->labels, label);
}

void agent_labels_make(const char *node, const struct string_list *extra,
		       const struct process_profile *profile, const struct agent_process *process,
		       struct agent_labels *labels)
{
	const struct pod_labels *pod = &process->labels;

	*labels = (struct agent_labels){0};
	if (pod->namespace[0]) {
		char workload[POD_NAME_MAX + 1];

		pod_labels_workload(pod->pod[0] ? pod->pod : profile->process_name, workload,
				    sizeof(workload));
		labels->service = xasprintf("%s/%s", pod->namespace, workload);
		add_label(labels, "namespace", pod->namespace);
	} else if (pod->container[0]) {
		labels->service = xasprintf("container/%s", pod->container);
	} else {
		labels->service = xstrdup(profile->process_name);
	}
	make_printable(labels->service);
	if (pod->pod[0])
		add_label(labels, "pod", pod->pod);
	if (pod->container[0])
		add_label(labels, "container", pod->container);
	add_label(labels, "node", node);
	for (size_t i = 0; i < extra->count; i++)
		string_list_append(&labels->labels, xstrdup(extra->items[i]));
}

void agent_labels_free(struct agent_labels *labels)
{
	for (size_t i = 0; i < labels->labels.count; i++)
		free((char *)labels->labels.items[i]);
	string_list_clear(&labels->labels);
	free(labels->service);
	free(labels->profile_name);
}

static bool same_labels(const struct agent_labels *a, const struct agent_labels *b)
{
	if (strcmp(a->service, b->service) || a->labels.count != b->labels.count)
		return false;
	for (size_t i = 0; i < a->labels.count; i++)
		if (strcmp(a->labels.items[i], b->labels.items[i]))
			return false;
	return true;
}

void agent_series_add(struct agent_series_list *list, size_t index, struct agent_labels *labels)
{
	struct agent_series *series = NULL;

	for (size_t i = 0; i < list->count && !series; i++)
		if (same_labels(&list->items[i].labels, labels))
			series = &list->items[i];
	if (series) {
		agent_labels_free(labels);
	} else {
		grow_array((void **)&list->items, &list->capacity, list->count + 1,
			   sizeof(*list->items));
		series = &list->items[list->count++];
		*series = (struct agent_series){.labels = *labels};
	}
	grow_array((void **)&series->members, &series->member_capacity, series->member_count + 1,
		   sizeof(*series->members));
	series->members[series->member_count++] = index;
}

void agent_series_free(struct agent_series_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		agent_labels_free(&list->items[i].labels);
		free(list->items[i].members);
	}
	free(list->items);
}
