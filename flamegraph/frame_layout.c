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

/* Whether a node of this total width is drawn rather than merged. */
static bool is_drawn(double width, double threshold)
{
	return width > 0 && width >= threshold;
}

/* How many frames a layout with this threshold draws: the nodes at least
 * `threshold` wide (a child is never wider than its parent, so they form a
 * tree), and (but in a flame chart) one "…" frame under each of them whose
 * children left out add up to `min_width`. `left_out` is scratch space, one
 * per node. */
static size_t frames_drawn(const struct flamegraph *graph, const double *total, double threshold,
			   double min_width, double *left_out)
{
	size_t drawn = 0;

	memset(left_out, 0, graph->node_count * sizeof(*left_out));
	for (uint32_t node = 0; node < graph->node_count; node++) {
		uint32_t parent = graph->nodes[node].parent;

		if (is_drawn(total[node], threshold))
			drawn++;
		else if (node && total[parent] >= threshold)
			left_out[parent] += total[node];
	}
	if (graph->order == FLAMEGRAPH_CHART) /* no "…" frames: gaps */
		return drawn;
	for (uint32_t node = 0; node < graph->node_count; node++)
		if (left_out[node] > 0 && left_out[node] >= min_width)
			drawn++;
	return drawn;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The smallest width a drawn frame needs: `min_width`, or more when that
 * would draw more than `max_frames`. The count drawn only falls as the
 * threshold rises, so a binary search over the nodes' widths finds it. */
static double choose_threshold(const struct flamegraph *graph, const double *total,
			       double min_width, size_t max_frames)
{
	double *left_out, *widths, threshold = min_width;
	size_t low = 0, high = graph->node_count;

	if (!max_frames)
		return min_width;
	left_out = fg_malloc(graph->node_count * sizeof(*left_out));
	if (frames_drawn(graph, total, min_width, min_width, left_out) > max_frames) {
		widths = fg_malloc(graph->node_count * sizeof(*widths));
		memcpy(widths, total, graph->node_count * sizeof(*widths));
		qsort(widths, graph->node_count, sizeof(*widths), compare_doubles);
		/* Find the first width whose layout fits; the root's always does
		 * (it draws the root and at most one "…"). */
		while (low < high) {
			size_t middle = low + (high - low) / 2;

			if (widths[middle] > min_width &&
			    frames_drawn(graph, total, widths[middle], min_width, left_out) <=
				max_frames)
				high = middle;
			else
				low = middle + 1;
		}
		threshold = widths[low < graph->node_count ? low : graph->node_count - 1];
		free(widths);
	}
	free(left_out);
	return threshold;
}

void frame_layout_build(struct frame_layout *layout, const struct flamegraph *graph, bool reverse,
			double min_width, size_t max_frames)
{
	double threshold;
	bool in_time_order;
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
	threshold = choose_threshold(graph, total, min_width, max_frames);
	in_time_order = graph->order == FLAMEGRAPH_CHART;

	fg_grow((void **)&pending, &pending_capacity, 1, sizeof(*pending));
	pending[pending_count++] =
	    (struct placed_frame){.node = 0, .width = total[0], .width_before = total_before[0]};
	while (pending_count) {
		struct placed_frame frame = pending[--pending_count];
		uint32_t first = children.first[frame.node], last = children.first[frame.node + 1];
		struct placed_frame merged = {.node = frame.node, .depth = frame.depth + 1};

		fg_grow((void **)&layout->frames, &capacity, layout->count + 1,
			sizeof(*layout->frames));
		layout->frames[layout->count++] = frame;
		if (frame.depth > layout->max_depth)
			layout->max_depth = frame.depth;
		if (frame.merged)
			continue;
		/* Children kept start at the frame's left edge, the "…" of
		 * those left out follows them, the frame's self samples are
		 * the gap at the right end. In a flame chart x is time: every
		 * child keeps its place, and those left out leave gaps. They
		 * go on the work stack right to left so they are taken left
		 * to right. */
		fg_grow((void **)&pending, &pending_capacity, pending_count + (last - first) + 1,
			sizeof(*pending));
		merged.x = frame.x;
		for (uint32_t i = first; i < last; i++) {
			uint32_t child = children.nodes[i];

			if (is_drawn(total[child], threshold) || in_time_order)
				merged.x += total[child];
			else if (total[child] > 0) {
				merged.merged++;
				merged.width += total[child];
				merged.width_before += total_before[child];
			}
		}
		if (!in_time_order && merged.merged && merged.width >= min_width)
			pending[pending_count++] = merged;
		for (uint32_t i = last; i-- > first;) {
			uint32_t child = children.nodes[i];
			bool drawn = is_drawn(total[child], threshold);

			if (drawn || in_time_order)
				merged.x -= total[child];
			if (drawn)
				pending[pending_count++] =
				    (struct placed_frame){.node = child,
							  .depth = frame.depth + 1,
							  .x = merged.x,
							  .width = total[child],
							  .width_before = total_before[child]};
		}
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
