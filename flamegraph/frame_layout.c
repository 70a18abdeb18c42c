#include "frame_layout.h"
#include "allocation.h"

#include <stdlib.h>
#include <string.h>

static int compare_by_name(const void *a, const void *b, void *context)
{
	const struct flamegraph *graph = context;
	uint32_t name_a = graph->nodes[*(const uint32_t *)a].name;
	uint32_t name_b = graph->nodes[*(const uint32_t *)b].name;

	return strcmp(name_table_name(&graph->names, name_a),
		      name_table_name(&graph->names, name_b));
}

void frame_children_build(struct frame_children *children, const struct flamegraph *graph)
{
	size_t count = graph->node_count;
	uint32_t *next = fg_calloc(count + 1, sizeof(*next));

	children->first = fg_calloc(count + 1, sizeof(*children->first));
	children->nodes = fg_malloc(count * sizeof(*children->nodes));
	/* Counting sort by parent; nodes were created in insertion order. */
	for (size_t node = 1; node < count; node++)
		children->first[graph->nodes[node].parent + 1]++;
	for (size_t node = 0; node < count; node++)
		children->first[node + 1] += children->first[node];
	memcpy(next, children->first, (count + 1) * sizeof(*next));
	for (uint32_t node = 1; node < count; node++)
		children->nodes[next[graph->nodes[node].parent]++] = node;
	free(next);
	if (graph->order == FLAMEGRAPH_CHART)
		return;
	for (size_t node = 0; node < count; node++) {
		size_t siblings = children->first[node + 1] - children->first[node];

		if (siblings > 1)
			qsort_r(children->nodes + children->first[node], siblings,
				sizeof(*children->nodes), compare_by_name, (void *)graph);
	}
}

void frame_children_free(struct frame_children *children)
{
	free(children->first);
	free(children->nodes);
}

/* A new graph holding each stack of `graph` leaf first. */
static struct flamegraph *reverse_stacks(const struct flamegraph *graph)
{
	struct flamegraph *reversed = flamegraph_new(graph->order);
	uint32_t *path = NULL;
	size_t path_capacity = 0;

	reversed->differential = graph->differential;
	for (uint32_t node = 1; node < graph->node_count; node++) {
		const struct frame_node *leaf = &graph->nodes[node];
		uint32_t reversed_node = 0;
		size_t depth = 0;

		if (!leaf->self_before && !leaf->self_after)
			continue;
		for (uint32_t up = node; up; up = graph->nodes[up].parent) {
			fg_grow((void **)&path, &path_capacity, depth + 1, sizeof(*path));
			path[depth++] = up;
		}
		for (size_t i = 0; i < depth; i++) {
			const struct frame_node *frame = &graph->nodes[path[i]];

			reversed_node = frame_tree_child(
			    reversed, reversed_node, name_table_name(&graph->names, frame->name),
			    name_table_length(&graph->names, frame->name));
			if (frame->title != NO_TITLE)
				frame_tree_add_title(
				    reversed, reversed_node,
				    name_table_name(&graph->names, frame->title),
				    name_table_length(&graph->names, frame->title));
		}
		frame_tree_add_samples(reversed, reversed_node, leaf->self_before,
				       leaf->self_after);
	}
	free(path);
	return reversed;
}

void frame_layout_build(struct frame_layout *layout, const struct flamegraph *graph, bool reverse,
			double min_width)
{
	struct frame_children children;
	double *total, *total_before;
	struct placed_frame *pending = NULL; /* depth-first work stack */
	size_t pending_count = 0, pending_capacity = 0, capacity = 0;

	*layout = (struct frame_layout){.graph = graph};
	if (reverse)
		layout->graph = graph = layout->reversed = reverse_stacks(graph);
	total = fg_malloc(graph->node_count * sizeof(*total));
	total_before = fg_malloc(graph->node_count * sizeof(*total_before));
	for (size_t node = 0; node < graph->node_count; node++) {
		total[node] = graph->nodes[node].self_after;
		total_before[node] = graph->nodes[node].self_before;
	}
	for (size_t node = graph->node_count - 1; node > 0; node--) {
		total[graph->nodes[node].parent] += total[node];
		total_before[graph->nodes[node].parent] += total_before[node];
	}
	frame_children_build(&children, graph);

	fg_grow((void **)&pending, &pending_capacity, 1, sizeof(*pending));
	pending[pending_count++] =
	    (struct placed_frame){.node = 0, .width = total[0], .width_before = total_before[0]};
	while (pending_count) {
		struct placed_frame frame = pending[--pending_count];
		uint32_t first = children.first[frame.node], last = children.first[frame.node + 1];
		uint32_t child_count = last - first;
		double x = frame.x;

		if (frame.width <= 0 || frame.width < min_width)
			continue;
		fg_grow((void **)&layout->frames, &capacity, layout->count + 1,
			sizeof(*layout->frames));
		layout->frames[layout->count++] = frame;
		if (frame.depth > layout->max_depth)
			layout->max_depth = frame.depth;
		/* Children start at the frame's left edge (its self samples
		 * are the gap at the right end). They go on the work stack
		 * right to left so they are taken left to right. */
		fg_grow((void **)&pending, &pending_capacity, pending_count + child_count,
			sizeof(*pending));
		for (uint32_t i = 0; i < child_count; i++) {
			uint32_t child = children.nodes[first + i];

			pending[pending_count + child_count - 1 - i] =
			    (struct placed_frame){.node = child,
						  .depth = frame.depth + 1,
						  .x = x,
						  .width = total[child],
						  .width_before = total_before[child]};
			x += total[child];
		}
		pending_count += child_count;
	}
	free(pending);
	free(total);
	free(total_before);
	frame_children_free(&children);
}

void frame_layout_free(struct frame_layout *layout)
{
	free(layout->frames);
	flamegraph_free(layout->reversed);
	*layout = (struct frame_layout){0};
}
