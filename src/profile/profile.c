#include "profile.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void profile_init(struct profile *profile)
{
	*profile = (struct profile){
	    .strings = string_table_new(),
	    .event_name = "cpu-clock",
	    .max_stack_depth = 127, /* the kernel's default */
	};
}

void profile_release(struct profile *profile)
{
	string_table_free(profile->strings);
	free(profile->frames);
	free(profile->locations);
	free(profile->stack_locations);
	free(profile->stacks);
	free(profile->samples);
	free(profile->switches);
	free(profile->switch_ins);
	free(profile->returns);
	free(profile->off_cpu);
	free(profile->location_index);
	free(profile->stack_index);
	id_map_release(&profile->forks);
	id_map_release(&profile->unfollowed_modules);
	free(profile->unfollowed_by_module);
	*profile = (struct profile){0};
}

static uint64_t mix(uint64_t hash, uint64_t value)
{
	hash ^= value + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2);
	return hash;
}

static uint64_t hash_location(uint32_t pid, uint64_t address, bool kernel)
{
	return mix(mix(mix(0, pid), address), kernel);
}

static uint64_t hash_stack(const uint32_t *locations, size_t depth)
{
	uint64_t hash = depth;

	for (size_t i = 0; i < depth; i++)
		hash = mix(hash, locations[i]);
	return hash;
}

/* Open-addressing index of ids; rebuilt twice as large when half full. */
static void index_grow(uint32_t **index, size_t *size, size_t used,
		       uint64_t (*hash_of)(const struct profile *, uint32_t),
		       const struct profile *profile)
{
	size_t new_size;
	uint32_t *grown;

	if (used * 2 < *size)
		return;
	new_size = *size ? *size * 2 : 4096;
	grown = xmalloc(new_size * sizeof(*grown));
	memset(grown, 0xff, new_size * sizeof(*grown));
	for (uint32_t id = 0; id < used; id++) {
		size_t slot = hash_of(profile, id) & (new_size - 1);

		while (grown[slot] != PROFILE_NOT_FOUND)
			slot = (slot + 1) & (new_size - 1);
		grown[slot] = id;
	}
	free(*index);
	*index = grown;
	*size = new_size;
}

static uint64_t location_hash_of(const struct profile *profile, uint32_t id)
{
	const struct profile_location *location = &profile->locations[id];

	return hash_location(location->pid, location->address, location->kernel);
}

static uint64_t stack_hash_of(const struct profile *profile, uint32_t id)
{
	const struct profile_stack *stack = &profile->stacks[id];

	return hash_stack(profile->stack_locations + stack->first, stack->depth);
}

const char *profile_intern_printable(struct profile *profile, const char *text)
{
	const char *cursor = text;
	char *copy;
	const char *interned;

	while (*cursor && (unsigned char)*cursor >= 0x20 && *cursor != 0x7f)
		cursor++;
	if (!*cursor) /* the usual case: nothing to replace */
		return string_table_intern(profile->strings, text);
	copy = xstrdup(text);
	make_printable(copy);
	interned = string_table_intern(profile->strings, copy);
	free(copy);
	return interned;
}

uint32_t profile_find_location(const struct profile *profile, uint32_t pid, uint64_t address,
			       bool kernel)
{
	size_t mask = profile->location_index_size - 1, slot;

	if (!profile->location_index_size)
		return PROFILE_NOT_FOUND;
	slot = hash_location(pid, address, kernel) & mask;
	for (; profile->location_index[slot] != PROFILE_NOT_FOUND; slot = (slot + 1) & mask) {
		const struct profile_location *location =
		    &profile->locations[profile->location_index[slot]];

		if (location->pid == pid && location->address == address &&
		    location->kernel == kernel)
			return profile->location_index[slot];
	}
	return PROFILE_NOT_FOUND;
}

uint32_t profile_add_location(struct profile *profile, uint32_t pid, uint64_t address, bool kernel,
			      const struct resolved_location *resolved)
{
	uint32_t id = (uint32_t)profile->location_count;
	size_t slot;

	grow_array((void **)&profile->frames, &profile->frame_capacity,
		   profile->frame_count + resolved->frame_count, sizeof(*profile->frames));
	for (size_t i = 0; i < resolved->frame_count; i++) {
		const struct resolved_frame *frame = &resolved->frames[i];

		profile->frames[profile->frame_count + i] = (struct profile_frame){
		    .function = profile_intern_printable(profile, frame->function),
		    .offset = frame->offset,
		    .named = frame->named,
		    .file = frame->line.file ? profile_intern_printable(profile, frame->line.file)
					     : NULL,
		    .line = frame->line.file ? frame->line.number : 0,
		};
	}
	grow_array((void **)&profile->locations, &profile->location_capacity, id + 1,
		   sizeof(*profile->locations));
	profile->locations[id] = (struct profile_location){
	    .pid = pid,
	    .address = address,
	    .kernel = kernel,
	    .kind = resolved->kind,
	    .module = profile_intern_printable(profile, resolved->module),
	    .build_id = resolved->build_id
			    ? string_table_intern(profile->strings, resolved->build_id)
			    : NULL,
	    .first_frame = (uint32_t)profile->frame_count,
	    .frame_count = (uint32_t)resolved->frame_count,
	};
	profile->frame_count += resolved->frame_count;
	profile->location_count++;

	index_grow(&profile->location_index, &profile->location_index_size, id, location_hash_of,
		   profile);
	slot = hash_location(pid, address, kernel) & (profile->location_index_size - 1);
	while (profile->location_index[slot] != PROFILE_NOT_FOUND)
		slot = (slot + 1) & (profile->location_index_size - 1);
	profile->location_index[slot] = id;
	return id;
}

uint32_t profile_intern_stack(struct profile *profile, const uint32_t *locations, size_t depth)
{
	uint64_t hash = hash_stack(locations, depth);
	uint32_t id = (uint32_t)profile->stack_count;
	size_t mask, slot;

	index_grow(&profile->stack_index, &profile->stack_index_size, profile->stack_count,
		   stack_hash_of, profile);
	mask = profile->stack_index_size - 1;
	for (slot = hash & mask; profile->stack_index[slot] != PROFILE_NOT_FOUND;
	     slot = (slot + 1) & mask) {
		const struct profile_stack *stack = &profile->stacks[profile->stack_index[slot]];

		/* An empty stack (a sample with no frame) has no locations to
		 * compare or copy, and may come before any array exists. */
		if (stack->depth == depth &&
		    (depth == 0 || !memcmp(profile->stack_locations + stack->first, locations,
					   depth * sizeof(*locations))))
			return profile->stack_index[slot];
	}
	if (depth) {
		grow_array((void **)&profile->stack_locations, &profile->stack_location_capacity,
			   profile->stack_location_count + depth,
			   sizeof(*profile->stack_locations));
		memcpy(profile->stack_locations + profile->stack_location_count, locations,
		       depth * sizeof(*locations));
	}
	grow_array((void **)&profile->stacks, &profile->stack_capacity, id + 1,
		   sizeof(*profile->stacks));
	profile->stacks[id] =
	    (struct profile_stack){(uint32_t)profile->stack_location_count, (uint32_t)depth};
	profile->stack_location_count += depth;
	profile->stack_count++;
	profile->stack_index[slot] = id;
	return id;
}

void profile_add_sample(struct profile *profile, const struct profile_sample *sample)
{
	grow_array((void **)&profile->samples, &profile->sample_capacity, profile->sample_count + 1,
		   sizeof(*profile->samples));
	profile->samples[profile->sample_count++] = *sample;
}
