/* profile_fold(): from sampled stacks of addresses to stacks of function
 * names, root first, counted. */
#include "profile.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct fold_builder {
	struct folded_profile *folded;
	size_t capacity;
	uint32_t *index; /* open addressing over folded stacks */
	size_t index_size;
};

static uint64_t hash_functions(const char *const *functions, size_t depth)
{
	uint64_t hash = depth;

	/* Names are interned: their addresses identify them. */
	for (size_t i = 0; i < depth; i++)
		hash = (hash ^ (uintptr_t)functions[i]) * 1099511628211ull;
	return hash;
}

static void rebuild_index(struct fold_builder *builder)
{
	builder->index_size = builder->index_size ? builder->index_size * 2 : 4096;
	free(builder->index);
	builder->index = xmalloc(builder->index_size * sizeof(*builder->index));
	memset(builder->index, 0xff, builder->index_size * sizeof(*builder->index));
	for (uint32_t id = 0; id < builder->folded->count; id++) {
		const struct folded_stack *stack = &builder->folded->stacks[id];
		size_t slot =
		    hash_functions(stack->functions, stack->depth) & (builder->index_size - 1);

		while (builder->index[slot] != PROFILE_NOT_FOUND)
			slot = (slot + 1) & (builder->index_size - 1);
		builder->index[slot] = id;
	}
}

/* Adds `count` to the folded stack of these functions, making it if new. */
static void add_folded(struct fold_builder *builder, const char **functions,
		       const enum frame_kind *kinds, size_t depth, uint64_t count)
{
	struct folded_profile *folded = builder->folded;
	struct folded_stack *stack;
	size_t slot, mask;

	if (folded->count * 2 >= builder->index_size)
		rebuild_index(builder);
	mask = builder->index_size - 1;
	for (slot = hash_functions(functions, depth) & mask;
	     builder->index[slot] != PROFILE_NOT_FOUND; slot = (slot + 1) & mask) {
		stack = &folded->stacks[builder->index[slot]];
		if (stack->depth == depth &&
		    !memcmp(stack->functions, functions, depth * sizeof(*functions))) {
			stack->count += count;
			return;
		}
	}
	grow_array((void **)&folded->stacks, &builder->capacity, folded->count + 1,
		   sizeof(*folded->stacks));
	stack = &folded->stacks[folded->count];
	stack->functions = xmalloc(depth * sizeof(*functions));
	stack->kinds = xmalloc(depth * sizeof(*kinds));
	memcpy(stack->functions, functions, depth * sizeof(*functions));
	memcpy(stack->kinds, kinds, depth * sizeof(*kinds));
	stack->depth = depth;
	stack->count = count;
	builder->index[slot] = (uint32_t)folded->count++;
}

static int compare_folded(const void *a, const void *b)
{
	const struct folded_stack *x = a, *y = b;

	for (size_t i = 0; i < x->depth && i < y->depth; i++) {
		int order = x->functions[i] == y->functions[i]
				? 0
				: strcmp(x->functions[i], y->functions[i]);

		if (order)
			return order;
	}
	return (x->depth > y->depth) - (x->depth < y->depth);
}

void profile_fold(const struct profile *profile, struct folded_profile *folded)
{
	uint64_t *counts = xcalloc(profile->stack_count, sizeof(*counts));
	const char **process_names = xcalloc(profile->stack_count, sizeof(*process_names));
	struct fold_builder builder = {.folded = folded};
	const char **functions = NULL;
	enum frame_kind *kinds = NULL;
	size_t capacity = 0, kinds_capacity = 0;

	*folded = (struct folded_profile){0};
	for (size_t i = 0; i < profile->sample_count; i++) {
		counts[profile->samples[i].stack]++;
		process_names[profile->samples[i].stack] = profile->samples[i].process_name;
	}
	for (size_t id = 0; id < profile->stack_count; id++) {
		const struct profile_stack *stack = &profile->stacks[id];
		size_t depth = 0;

		if (!counts[id])
			continue;
		/* The process name is the root, as stackcollapse-perf makes it. */
		grow_array((void **)&functions, &capacity, 1, sizeof(*functions));
		grow_array((void **)&kinds, &kinds_capacity, 1, sizeof(*kinds));
		functions[depth] = process_names[id];
		kinds[depth++] = FRAME_NATIVE;
		for (size_t level = stack->depth; level-- > 0;) {
			const struct profile_location *location =
			    &profile->locations[profile->stack_locations[stack->first + level]];

			for (size_t frame = location->frame_count; frame-- > 0;) {
				grow_array((void **)&functions, &capacity, depth + 1,
					   sizeof(*functions));
				grow_array((void **)&kinds, &kinds_capacity, depth + 1,
					   sizeof(*kinds));
				functions[depth] =
				    profile->frames[location->first_frame + frame].function;
				kinds[depth++] = location->kind;
			}
		}
		add_folded(&builder, functions, kinds, depth, counts[id]);
		folded->total += counts[id];
	}
	if (folded->count > 1) /* qsort() may not be given NULL, even for 0 items */
		qsort(folded->stacks, folded->count, sizeof(*folded->stacks), compare_folded);
	free(builder.index);
	free(functions);
	free(kinds);
	free(process_names);
	free(counts);
}

void folded_profile_release(struct folded_profile *folded)
{
	for (size_t i = 0; i < folded->count; i++) {
		free(folded->stacks[i].functions);
		free(folded->stacks[i].kinds);
	}
	free(folded->stacks);
	*folded = (struct folded_profile){0};
}
