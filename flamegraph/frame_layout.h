/* Where each frame goes: totals per node, siblings in drawing order, and
 * the frames wide enough to draw, in depth-first order (a frame before its
 * children, children left to right). That order lets the SVG script find
 * nested search matches in one pass. */
#ifndef PROFCPU_FRAME_LAYOUT_H
#define PROFCPU_FRAME_LAYOUT_H

#include "frame_tree.h"

struct frame_children {
	uint32_t *first; /* node -> index into `nodes` of its first child */
	uint32_t *nodes; /* children of node n: nodes[first[n] .. first[n + 1]) */
};

/* Children in drawing order: by name for merged graphs, in the order they
 * were added for flame charts. */
void frame_children_build(struct frame_children *children, const struct flamegraph *graph);
void frame_children_free(struct frame_children *children);

struct placed_frame {
	uint32_t node;	     /* for a merged frame: the parent of what it merges */
	uint32_t merged;     /* 0, or the count of narrow siblings this "…" frame stands for */
	uint32_t depth;	     /* 0 for the root */
	double x;	     /* samples (after) left of the frame */
	double width;	     /* total samples (after) of the frame */
	double width_before; /* total samples before, for differential graphs */
};

struct frame_layout {
	const struct flamegraph *graph; /* the graph the nodes belong to */
	struct flamegraph *reversed;	/* owned when laid out with `reverse` */
	struct placed_frame *frames;
	size_t count;
	uint32_t max_depth;
};

/* Lays the graph out, leaving out frames narrower than `min_width`
 * samples, and more when needed to draw at most about `max_frames` (0: no
 * limit): the narrowest go first. Under each frame, its children left out
 * are merged into one "…" frame (`merged` > 0) right of the children kept,
 * when together they are at least `min_width` wide; in a flame chart, whose
 * x is time, they leave gaps instead. With `reverse`, stacks
 * are merged leaf first. */
void frame_layout_build(struct frame_layout *layout, const struct flamegraph *graph, bool reverse,
			double min_width, size_t max_frames);
void frame_layout_free(struct frame_layout *layout);

#endif
