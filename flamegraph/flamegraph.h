/* Flame graphs: a tree of sampled call stacks, read from memory or from
 * folded text, written as an interactive SVG or as folded text.
 *
 * A graph holds stacks merged by their frames, root first. Every stack has
 * two counts: `before` and `after`. A plain profile gives both the same
 * count; a differential one (two captures, or a folded file with two count
 * columns) gives them separately, and the SVG then sizes frames by `after`
 * and colours them by the change (red for growth, blue for shrinkage).
 *
 * The library needs nothing from the profcpu command: it allocates with
 * malloc and aborts when memory runs out, like the rest of profcpu. */
#ifndef PROFCPU_FLAMEGRAPH_H
#define PROFCPU_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct flamegraph;

/* How stacks merge into the tree. */
enum flamegraph_order {
	/* A flame graph: identical stacks merge wherever they appear and
	 * siblings are drawn in name order. */
	FLAMEGRAPH_MERGED,
	/* A flame chart: stacks stay in the order they were added (time), and
	 * a stack merges only with the one added just before it. */
	FLAMEGRAPH_CHART,
};

struct flamegraph *flamegraph_new(enum flamegraph_order order);
void flamegraph_free(struct flamegraph *graph);

/* Adds `count` samples of the stack `frames[0..depth)`, root first, to both
 * counts. The names are copied; they may be any bytes but NUL. A stack of
 * depth 0 or a count <= 0 adds nothing. */
void flamegraph_add_stack(struct flamegraph *graph, const char *const *frames, size_t depth,
			  double count);

/* The same, with a title for each frame (NULL: none, or titles[i] NULL):
 * the frame's full name, shown on hover under its name. A frame that
 * stacks with different titles merge into shows each, a line each. */
void flamegraph_add_titled_stack(struct flamegraph *graph, const char *const *frames,
				 const char *const *titles, size_t depth, double count);

/* True once any differential stack was added. */
bool flamegraph_is_differential(const struct flamegraph *graph);

/* Number of distinct stacks (tree paths ending with samples of their own). */
size_t flamegraph_stack_count(const struct flamegraph *graph);

/* Scales the `before` counts so their total equals the `after` total: two
 * captures of different lengths then compare by share of time. */
void flamegraph_normalize_before(struct flamegraph *graph);

/* Folded text: one stack a line, "root;caller;leaf COUNT", or with two
 * columns "root;caller;leaf BEFORE AFTER". Frames may contain spaces;
 * counts may be decimal; lines come in any order and repeats add up. */
enum folded_columns {
	FOLDED_ONE_OR_TWO, /* one count (both columns) or two (differential) */
	FOLDED_AS_BEFORE,  /* one count a line, added to `before` only */
	FOLDED_AS_AFTER,   /* one count a line, added to `after` only */
};

struct folded_read_stats {
	size_t lines;	       /* lines read, blank ones included */
	size_t stacks;	       /* lines added to the graph */
	size_t bad_lines;      /* lines skipped: no count, bad count, empty frame */
	size_t first_bad_line; /* 1-based number of the first bad line, or 0 */
};

/* Reads folded text from `in` into the graph. Blank lines are ignored; bad
 * lines are skipped and counted in `stats` (which may be NULL). Returns 0,
 * or -1 with errno set when reading fails. */
int flamegraph_read_folded(struct flamegraph *graph, FILE *in, enum folded_columns columns,
			   struct folded_read_stats *stats);

/* Writes one line per distinct stack in name order: "stack COUNT" for a
 * plain graph, "stack BEFORE AFTER" for a differential one. Names holding
 * ';' or line breaks are written as they are. Returns 0, or -1 with errno
 * set when writing fails. */
int flamegraph_write_folded(struct flamegraph *graph, FILE *out);

/* How the SVG looks. Zero-initialized fields take the defaults noted. */
struct flamegraph_options {
	const char *title;	   /* default "Flame Graph", "Icicle Graph", ... */
	const char *subtitle;	   /* second line under the title, or NULL */
	const char *count_name;	   /* default "samples" */
	const char *notes;	   /* text kept in the SVG's <desc>, or NULL */
	const char *palette;	   /* default "dotnet"; see flamegraph_palette_is_known */
	double width;		   /* image width in pixels, default 1200 */
	double frame_height;	   /* pixels per frame, default 16 */
	double min_width;	   /* frames narrower than this are left out ... */
	bool min_width_is_percent; /* ... in pixels, or in % of the width; default (0)
				    * 0.1 px; a negative value keeps every frame */
	bool inverted;		   /* icicle graph: roots at the top */
	bool reverse;		   /* merge stacks from the leaf: leaves become roots */
};

/* Whether flamegraph_options.palette may be `name`: dotnet (colours by kind
 * of code, see palette.h), java (the same), hot, mem, io, red, green, blue,
 * aqua, yellow, purple, orange. Case does not matter. */
bool flamegraph_palette_is_known(const char *name);

/* Writes the graph as a standalone SVG with its script embedded (hover
 * details, click to zoom, regex search, state kept in the URL). Returns 0;
 * -1 with errno EINVAL for an unknown palette or a bad size, ENODATA when
 * the graph has no samples, or the errno of a failed write. */
int flamegraph_write_svg(struct flamegraph *graph, const struct flamegraph_options *options,
			 FILE *out);

#endif
