#include "emit.h"
#include "flamegraph.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int emit_flamegraph(const struct folded_profile *folded, const char *title, const char *subtitle,
		    FILE *out)
{
	return emit_flamegraph_styled(folded, title, subtitle, NULL, NULL, out);
}

int emit_flamegraph_styled(const struct folded_profile *folded, const char *title,
			   const char *subtitle, const char *palette, const char *count_name,
			   FILE *out)
{
	struct flamegraph *graph = flamegraph_new(FLAMEGRAPH_MERGED);
	struct flamegraph_options options = {
	    .title = title, .subtitle = subtitle, .palette = palette, .count_name = count_name};
	const char **frames = NULL, **titles = NULL;
	char *kernel_names = NULL;
	size_t frames_capacity = 0, titles_capacity = 0, kernel_names_capacity = 0;
	int status;

	for (size_t i = 0; i < folded->count; i++) {
		const struct folded_stack *stack = &folded->stacks[i];
		size_t needed = 0;
		char *cursor;

		for (size_t level = 0; level < stack->depth; level++)
			if (stack->kinds[level] == FRAME_KERNEL)
				needed += strlen(stack->functions[level]) + sizeof("_[k]");
		grow_array((void **)&frames, &frames_capacity, stack->depth, sizeof(*frames));
		grow_array((void **)&titles, &titles_capacity, stack->depth, sizeof(*titles));
		grow_array((void **)&kernel_names, &kernel_names_capacity, needed, 1);
		cursor = kernel_names;
		for (size_t level = 0; level < stack->depth; level++) {
			frames[level] = stack->functions[level];
			/* The full name (signature, tier) shows on hover. */
			titles[level] = stack->full_names[level] != stack->functions[level]
					    ? stack->full_names[level]
					    : NULL;
			/* stackcollapse-perf's "_[k]" mark: the palette colours
			 * the frame as kernel code, and the graph hides the mark. */
			if (stack->kinds[level] == FRAME_KERNEL) {
				frames[level] = cursor;
				cursor += sprintf(cursor, "%s_[k]", stack->functions[level]) + 1;
			}
		}
		flamegraph_add_titled_stack(graph, frames, titles, stack->depth,
					    (double)stack->count);
	}
	status = flamegraph_write_svg(graph, &options, out);
	free(kernel_names);
	free(frames);
	free(titles);
	flamegraph_free(graph);
	return status;
}
