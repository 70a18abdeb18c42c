#include "frame_tree.h"
#include "allocation.h"

#include <stdlib.h>
#include <string.h>

enum { FIRST_CHILD_SLOT_COUNT = 1024 };

static uint64_t child_hash(uint32_t parent, uint32_t name)
{
	uint64_t key = ((uint64_t)parent << 32 | name) * 0x9E3779B97F4A7C15ull;

	return key ^ (key >> 29);
}

static uint32_t new_node(struct flamegraph *graph, uint32_t parent, uint32_t name)
{
	uint32_t index = (uint32_t)graph->node_count;

	fg_grow((void **)&graph->nodes, &graph->node_capacity, graph->node_count + 1,
		sizeof(*graph->nodes));
	graph->nodes[index] = (struct frame_node){
	    .name = name, .parent = parent, .last_child = NO_NODE, .title = NO_TITLE};
	graph->node_count++;
	if (parent != NO_NODE)
		graph->nodes[parent].last_child = index;
	return index;
}

struct flamegraph *flamegraph_new(enum flamegraph_order order)
{
	struct flamegraph *graph = fg_calloc(1, sizeof(*graph));

	graph->order = order;
	name_table_init(&graph->names);
	new_node(graph, NO_NODE, name_table_intern(&graph->names, "all", 3));
	if (order == FLAMEGRAPH_MERGED) {
		graph->child_slot_count = FIRST_CHILD_SLOT_COUNT;
		graph->child_slots =
		    fg_calloc(graph->child_slot_count, sizeof(*graph->child_slots));
	}
	return graph;
}

void flamegraph_free(struct flamegraph *graph)
{
	if (!graph)
		return;
	name_table_free(&graph->names);
	free(graph->nodes);
	free(graph->child_slots);
	free(graph);
}

static void rehash_children(struct flamegraph *graph)
{
	size_t count = graph->child_slot_count * 2;
	struct child_slot *slots = fg_calloc(count, sizeof(*slots));

	for (size_t i = 0; i < graph->child_slot_count; i++) {
		const struct child_slot *old = &graph->child_slots[i];
		size_t slot;

		if (!old->node_plus_one)
			continue;
		slot = child_hash(old->parent, old->name) & (count - 1);
		while (slots[slot].node_plus_one)
			slot = (slot + 1) & (count - 1);
		slots[slot] = *old;
	}
	free(graph->child_slots);
	graph->child_slots = slots;
	graph->child_slot_count = count;
}

uint32_t frame_tree_child(struct flamegraph *graph, uint32_t parent, const char *name,
			  size_t length)
{
	uint32_t name_id = name_table_intern(&graph->names, name, length);
	struct child_slot *slot;
	size_t mask, index;
	uint32_t child;

	if (graph->order == FLAMEGRAPH_CHART) {
		child = graph->nodes[parent].last_child;
		if (child != NO_NODE && graph->nodes[child].name == name_id)
			return child;
		return new_node(graph, parent, name_id);
	}
	mask = graph->child_slot_count - 1;
	for (index = child_hash(parent, name_id) & mask; graph->child_slots[index].node_plus_one;
	     index = (index + 1) & mask) {
		slot = &graph->child_slots[index];
		if (slot->parent == parent && slot->name == name_id)
			return slot->node_plus_one - 1;
	}
	child = new_node(graph, parent, name_id);
	graph->child_slots[index] =
	    (struct child_slot){.parent = parent, .name = name_id, .node_plus_one = child + 1};
	if (graph->node_count * 2 > graph->child_slot_count)
		rehash_children(graph);
	return child;
}

/* Whether `line[0..length)` is one of the '\n'-separated lines of `text`;
 * counts them into `lines`. */
static bool has_line(const char *text, size_t text_length, const char *line, size_t length,
		     size_t *lines)
{
	const char *end = text + text_length;
	bool found = false;

	*lines = 0;
	for (const char *start = text; start <= end; start++) {
		const char *stop = memchr(start, '\n', (size_t)(end - start));

		if (!stop)
			stop = end;
		(*lines)++;
		found |= (size_t)(stop - start) == length && !memcmp(start, line, length);
		start = stop;
	}
	return found;
}

void frame_tree_add_title(struct flamegraph *graph, uint32_t node, const char *title, size_t length)
{
	struct frame_node *frame = &graph->nodes[node];
	const char *old;
	size_t old_length, lines;
	char *joined;

	if (frame->title == NO_TITLE) {
		if (length != name_table_length(&graph->names, frame->name) ||
		    memcmp(title, name_table_name(&graph->names, frame->name), length))
			frame->title = name_table_intern(&graph->names, title, length);
		return;
	}
	old = name_table_name(&graph->names, frame->title);
	old_length = name_table_length(&graph->names, frame->title);
	if (has_line(old, old_length, title, length, &lines) || lines >= MAX_TITLE_LINES)
		return;
	joined = fg_malloc(old_length + 1 + length);
	memcpy(joined, old, old_length);
	joined[old_length] = '\n';
	memcpy(joined + old_length + 1, title, length);
	frame->title = name_table_intern(&graph->names, joined, old_length + 1 + length);
	free(joined);
}

void frame_tree_add_samples(struct flamegraph *graph, uint32_t node, double before, double after)
{
	struct frame_node *frame = &graph->nodes[node];

	if (!frame->self_before && !frame->self_after)
		graph->stack_count++;
	frame->self_before += before;
	frame->self_after += after;
}

void flamegraph_add_stack(struct flamegraph *graph, const char *const *frames, size_t depth,
			  double count)
{
	flamegraph_add_titled_stack(graph, frames, NULL, depth, count);
}

void flamegraph_add_titled_stack(struct flamegraph *graph, const char *const *frames,
				 const char *const *titles, size_t depth, double count)
{
	uint32_t node = 0;

	if (!depth || !(count > 0))
		return;
	for (size_t i = 0; i < depth; i++) {
		node = frame_tree_child(graph, node, frames[i], strlen(frames[i]));
		if (titles && titles[i])
			frame_tree_add_title(graph, node, titles[i], strlen(titles[i]));
	}
	frame_tree_add_samples(graph, node, count, count);
}

bool flamegraph_is_differential(const struct flamegraph *graph)
{
	return graph->differential;
}

size_t flamegraph_stack_count(const struct flamegraph *graph)
{
	return graph->stack_count;
}

void flamegraph_normalize_before(struct flamegraph *graph)
{
	double before = 0, after = 0;

	for (size_t node = 0; node < graph->node_count; node++) {
		before += graph->nodes[node].self_before;
		after += graph->nodes[node].self_after;
	}
	if (before <= 0 || after <= 0)
		return;
	for (size_t node = 0; node < graph->node_count; node++)
		graph->nodes[node].self_before *= after / before;
}
