/* The frame tree behind struct flamegraph: one node per distinct call path,
 * holding the samples that ended exactly there. Node 0 is the root ("all");
 * a child is always created after its parent, so it has a larger index. */
#ifndef PROFCPU_FRAME_TREE_H
#define PROFCPU_FRAME_TREE_H

#include "flamegraph.h"
#include "name_table.h"

#include <stdint.h>

#define NO_NODE		UINT32_MAX
#define NO_TITLE	UINT32_MAX
#define MAX_TITLE_LINES 4 /* distinct full names kept for one frame */

struct frame_node {
	uint32_t name;			/* id in the graph's name table */
	uint32_t parent;		/* NO_NODE for the root */
	uint32_t last_child;		/* newest child (flame charts merge with it), or NO_NODE */
	uint32_t title;			/* name id of its full names, a line each, or NO_TITLE */
	double self_before, self_after; /* samples ending at this node */
};

/* The key lives in the slot so a lookup touches no node. */
struct child_slot {
	uint32_t parent, name;
	uint32_t node_plus_one; /* 0: empty */
};

struct flamegraph {
	enum flamegraph_order order;
	bool differential;
	size_t stack_count;
	struct name_table names;
	struct frame_node *nodes;
	size_t node_count, node_capacity;
	struct child_slot *child_slots; /* merged graphs: hash of (parent, name) */
	size_t child_slot_count;
};

/* The child of `parent` named `name[0..length)`, created if needed. */
uint32_t frame_tree_child(struct flamegraph *graph, uint32_t parent, const char *name,
			  size_t length);

/* Adds `title[0..length)`, a full name of the frame, as a line of the
 * node's title, unless the title has it or MAX_TITLE_LINES lines. */
void frame_tree_add_title(struct flamegraph *graph, uint32_t node, const char *title,
			  size_t length);

/* Adds samples that end at `node`. */
void frame_tree_add_samples(struct flamegraph *graph, uint32_t node, double before, double after);

#endif
