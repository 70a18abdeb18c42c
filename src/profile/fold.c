/* profile_fold(): from sampled stacks of addresses to stacks of readable
 * function names, root first, counted. */
#include "id_map.h"
#include "managed_name.h"
#include "profile.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fold_builder {
	struct folded_profile *folded;
	size_t capacity;
	uint32_t *index; /* open addressing over folded stacks */
	size_t index_size;
};

/* One stack being folded, root first. */
struct frame_list {
	const char **functions, **full_names;
	enum frame_kind *kinds;
	size_t depth, capacity;
};

static uint64_t hash_frames(const char *const *functions, const char *const *full_names,
			    size_t depth)
{
	uint64_t hash = depth;

	/* Names are interned: their addresses identify them. */
	for (size_t i = 0; i < depth; i++) {
		hash = (hash ^ (uintptr_t)functions[i]) * 1099511628211ull;
		hash = (hash ^ (uintptr_t)full_names[i]) * 1099511628211ull;
	}
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
		size_t slot = hash_frames(stack->functions, stack->full_names, stack->depth) &
			      (builder->index_size - 1);

		while (builder->index[slot] != PROFILE_NOT_FOUND)
			slot = (slot + 1) & (builder->index_size - 1);
		builder->index[slot] = id;
	}
}

static const char **copy_names(const char *const *names, size_t depth)
{
	const char **copy = xmalloc(depth * sizeof(*copy));

	memcpy(copy, names, depth * sizeof(*copy));
	return copy;
}

/* Adds `count` to the folded stack of these frames, making it if new. */
static void add_folded(struct fold_builder *builder, const struct frame_list *frames,
		       uint64_t count)
{
	struct folded_profile *folded = builder->folded;
	size_t depth = frames->depth, slot, mask;
	struct folded_stack *stack;

	if (folded->count * 2 >= builder->index_size)
		rebuild_index(builder);
	mask = builder->index_size - 1;
	for (slot = hash_frames(frames->functions, frames->full_names, depth) & mask;
	     builder->index[slot] != PROFILE_NOT_FOUND; slot = (slot + 1) & mask) {
		stack = &folded->stacks[builder->index[slot]];
		if (stack->depth == depth &&
		    !memcmp(stack->functions, frames->functions, depth * sizeof(char *)) &&
		    !memcmp(stack->full_names, frames->full_names, depth * sizeof(char *))) {
			stack->count += count;
			return;
		}
	}
	grow_array((void **)&folded->stacks, &builder->capacity, folded->count + 1,
		   sizeof(*folded->stacks));
	stack = &folded->stacks[folded->count];
	stack->functions = copy_names(frames->functions, depth);
	stack->full_names = copy_names(frames->full_names, depth);
	stack->kinds = xmalloc(depth * sizeof(*stack->kinds));
	memcpy(stack->kinds, frames->kinds, depth * sizeof(*stack->kinds));
	stack->depth = depth;
	stack->count = count;
	builder->index[slot] = (uint32_t)folded->count++;
}

static int compare_names(const char *const *x, size_t x_depth, const char *const *y, size_t y_depth)
{
	for (size_t i = 0; i < x_depth && i < y_depth; i++) {
		int order = x[i] == y[i] ? 0 : strcmp(x[i], y[i]);

		if (order)
			return order;
	}
	return (x_depth > y_depth) - (x_depth < y_depth);
}

static int compare_folded(const void *a, const void *b)
{
	const struct folded_stack *x = a, *y = b;
	int order = compare_names(x->functions, x->depth, y->functions, y->depth);

	return order ? order : compare_names(x->full_names, x->depth, y->full_names, y->depth);
}

static void push_frame(struct frame_list *frames, const char *function, const char *full_name,
		       enum frame_kind kind)
{
	if (frames->depth == frames->capacity) {
		frames->capacity = frames->capacity ? 2 * frames->capacity : 64;
		frames->functions =
		    xrealloc(frames->functions, frames->capacity * sizeof(*frames->functions));
		frames->full_names =
		    xrealloc(frames->full_names, frames->capacity * sizeof(*frames->full_names));
		frames->kinds = xrealloc(frames->kinds, frames->capacity * sizeof(*frames->kinds));
	}
	frames->functions[frames->depth] = function;
	frames->full_names[frames->depth] = full_name;
	frames->kinds[frames->depth++] = kind;
}

/* The name a thread's samples are grouped under: its name without a
 * number at the end ("worker-3", "pool 12"), so numbered threads of one
 * pool make one tower; a name that is only a number stays whole. */
static const char *thread_group(struct folded_profile *folded, const char *thread_name)
{
	size_t length = strlen(thread_name), end = length;
	char *group;
	const char *interned;

	while (end > 0 && thread_name[end - 1] >= '0' && thread_name[end - 1] <= '9')
		end--;
	if (end == length || end < 2 || !strchr(" -_#:.", thread_name[end - 1]))
		return string_table_intern(folded->names, thread_name);
	group = xasprintf("%.*s", (int)(end - 1), thread_name);
	interned = string_table_intern(folded->names, group);
	free(group);
	return interned;
}

static const char *group_of(struct folded_profile *folded, const struct profile_sample *sample,
			    enum fold_group group_by)
{
	char *text;
	const char *interned;

	switch (group_by) {
	case FOLD_BY_PROCESS:
		return sample->process_name;
	case FOLD_BY_PID:
		text = xasprintf("%s-%u", sample->process_name, sample->pid);
		interned = string_table_intern(folded->names, text);
		free(text);
		return interned;
	case FOLD_BY_TID:
		text = xasprintf("%s-%u/%u", sample->thread_name, sample->pid, sample->tid);
		interned = string_table_intern(folded->names, text);
		free(text);
		return interned;
	case FOLD_BY_THREAD:
		break;
	}
	return thread_group(folded, sample->thread_name);
}

/* A sampled stack with the group its samples fold under. */
struct grouped_stack {
	const char *group;
	uint32_t stack;
	uint64_t weight; /* 1, or the sample's period */
};

static int compare_grouped(const void *a, const void *b)
{
	const struct grouped_stack *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->group == y->group ? 0 : strcmp(x->group, y->group);
}

/* The samples' (stack, group) pairs, each once with its samples' weight:
 * many samples share a stack, and sorting every sample took 7% of a
 * postprocess. */
struct grouped_set {
	struct id_map ids;	     /* (group, stack) -> index in pairs */
	struct grouped_stack *pairs; /* by id */
	size_t count, capacity;
};

static void add_grouped(struct grouped_set *set, const char *group, uint32_t stack, uint64_t weight)
{
	bool added;
	uint32_t id = id_map_get(&set->ids, (uintptr_t)group, stack, &added);

	if (!added) {
		set->pairs[id].weight += weight;
		return;
	}
	grow_array((void **)&set->pairs, &set->capacity, set->count + 1, sizeof(*set->pairs));
	set->pairs[set->count++] = (struct grouped_stack){group, stack, weight};
}

/* The names of each frame of the profile, made when a stack first has it. */
struct fold_cache {
	const char **readable, **full_names; /* by frame index */
};

/* The name frame `index` of the profile shows in folded stacks. Any frame
 * but the kernel's may be a .NET method: the perf map and jitdump name JIT
 * code, ReadyToRun images name precompiled code in mapped files. */
static const char *readable_name(const struct profile *profile, struct folded_profile *folded,
				 const struct fold_options *options,
				 const struct profile_location *location, uint32_t index)
{
	const char *function = profile->frames[index].function, *interned;
	char *readable;

	if (location->kind == FRAME_KERNEL)
		return function;
	readable = managed_name_readable(function, options->keep_tiers);
	interned = readable ? string_table_intern(folded->names, readable) : function;
	free(readable);
	return interned;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The frame's name with its source line, "NAME FILE:LINE", interned; the
 * name alone when no line is known. */
static const char *with_line(struct folded_profile *folded, const char *name,
			     const struct profile_frame *frame, const char *separator)
{
	char *text;
	const char *interned;

	if (!frame->file)
		return name;
	text = xasprintf("%s%s%s:%u", name, separator, base_name(frame->file), frame->line);
	interned = string_table_intern(folded->names, text);
	free(text);
	return interned;
}

/* The names frame `index` folds under: the readable one the stack shows
 * (with its line, options->by_line), and the full one the flame graph's
 * tooltip shows, "FULL NAME at FILE:LINE" when the line is known. */
static void fold_names(const struct profile *profile, struct folded_profile *folded,
		       const struct fold_options *options, struct fold_cache *cache,
		       const struct profile_location *location, uint32_t index,
		       const char **readable, const char **full_name)
{
	const struct profile_frame *frame = &profile->frames[index];

	if (!cache->readable[index]) {
		const char *name = readable_name(profile, folded, options, location, index);

		cache->readable[index] =
		    options->by_line ? with_line(folded, name, frame, " ") : name;
		cache->full_names[index] = with_line(folded, frame->function, frame, " at ");
	}
	*readable = cache->readable[index];
	*full_name = cache->full_names[index];
}

/* Code compiled by on-stack replacement ("...[OptimizedTier1OSR]"): the
 * runtime enters it from a running call of the same method, whose frame
 * stays below it. */
static bool is_osr(const char *full_name)
{
	size_t length = strlen(full_name);

	return length > 4 && !strcmp(full_name + length - 4, "OSR]");
}

/* Builds the frames of `stack`, root first, under `group`. */
static void fold_stack(const struct profile *profile, struct folded_profile *folded,
		       const struct fold_options *options, struct fold_cache *cache,
		       const struct profile_stack *stack, const char *group,
		       struct frame_list *frames)
{
	const char *previous_unnamed = NULL;

	frames->depth = 0;
	push_frame(frames, group, group, FRAME_NATIVE);
	for (size_t level = stack->depth; level-- > 0;) {
		const struct profile_location *location =
		    &profile->locations[profile->stack_locations[stack->first + level]];

		for (size_t frame = location->frame_count; frame-- > 0;) {
			uint32_t index = location->first_frame + (uint32_t)frame;
			const struct profile_frame *named = &profile->frames[index];
			const char *readable, *full_name;

			/* "[libcoreclr.so]" calling itself ten times is one frame:
			 * the tower would say nothing more. */
			if (!named->named && named->function == previous_unnamed)
				continue;
			fold_names(profile, folded, options, cache, location, index, &readable,
				   &full_name);
			previous_unnamed = named->named ? NULL : named->function;
			/* A method and its OSR code are one call: one frame, named
			 * by the code that runs. */
			if (readable == frames->functions[frames->depth - 1] &&
			    is_osr(named->function)) {
				frames->full_names[frames->depth - 1] = full_name;
				continue;
			}
			push_frame(frames, readable, full_name, location->kind);
		}
	}
}

void profile_fold(const struct profile *profile, const struct fold_options *options,
		  struct folded_profile *folded)
{
	static const struct fold_options defaults = {.group_by = FOLD_BY_THREAD};
	struct grouped_set set = {0};
	struct fold_cache cache = {
	    .readable = xcalloc(profile->frame_count + 1, sizeof(*cache.readable)),
	    .full_names = xcalloc(profile->frame_count + 1, sizeof(*cache.full_names)),
	};
	struct fold_builder builder = {.folded = folded};
	struct frame_list frames = {0};

	if (!options)
		options = &defaults;
	*folded = (struct folded_profile){.names = string_table_new()};
	for (size_t i = 0; i < profile->sample_count; i++)
		add_grouped(&set, group_of(folded, &profile->samples[i], options->group_by),
			    profile->samples[i].stack,
			    options->weigh_by_period ? profile->samples[i].period : 1);
	id_map_release(&set.ids);
	if (set.count > 1)
		qsort(set.pairs, set.count, sizeof(*set.pairs), compare_grouped);
	for (size_t i = 0, next; i < set.count; i = next) {
		const struct grouped_stack *grouped = set.pairs;
		uint64_t weight = 0;

		/* Distinct copies of one group name sort together: one stack. */
		for (next = i; next < set.count && !compare_grouped(&grouped[i], &grouped[next]);
		     next++)
			weight += grouped[next].weight;
		fold_stack(profile, folded, options, &cache, &profile->stacks[grouped[i].stack],
			   grouped[i].group, &frames);
		add_folded(&builder, &frames, weight);
		folded->total += weight;
	}
	if (folded->count > 1) /* qsort() may not be given NULL, even for 0 items */
		qsort(folded->stacks, folded->count, sizeof(*folded->stacks), compare_folded);
	free(builder.index);
	free(frames.functions);
	free(frames.full_names);
	free(frames.kinds);
	free(cache.readable);
	free(cache.full_names);
	free(set.pairs);
}

void folded_profile_release(struct folded_profile *folded)
{
	for (size_t i = 0; i < folded->count; i++) {
		free(folded->stacks[i].functions);
		free(folded->stacks[i].full_names);
		free(folded->stacks[i].kinds);
	}
	free(folded->stacks);
	if (folded->names)
		string_table_free(folded->names);
	*folded = (struct folded_profile){0};
}
