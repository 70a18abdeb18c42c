#include "runtime_profiles.h"
#include "id_map.h"
#include "managed_name.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* One profile being built. JIT code is reused: an address whose name has
 * changed by an event's time gets a new location, and the profile's index
 * keeps finding the first (as the replay does, replay.c). */
struct builder {
	struct runtime_profile *out;
	struct resolver *resolver;
	pid_t pid;
	uint32_t *newest;      /* by location: the newest one of its address */
	uint64_t *valid_until; /* by location */
	size_t version_capacity;
	struct id_map types;	 /* a type's interned name -> its pseudo address - 1 */
	uint32_t stack[256 + 1]; /* runtime_stacks.c keeps at most 256 frames */
};

static uint32_t keep_location(struct builder *builder, uint64_t address,
			      const struct resolved_location *resolved)
{
	struct profile *profile = &builder->out->profile;
	uint32_t first = profile_find_location(profile, (uint32_t)builder->pid, address, false);
	uint32_t id =
	    profile_add_location(profile, (uint32_t)builder->pid, address, false, resolved);

	grow_array((void **)&builder->newest, &builder->version_capacity, (size_t)id + 1,
		   sizeof(*builder->newest));
	builder->valid_until = xrealloc(builder->valid_until,
					builder->version_capacity * sizeof(*builder->valid_until));
	builder->newest[id] = id;
	builder->valid_until[id] = resolved->valid_until;
	if (first != PROFILE_NOT_FOUND)
		builder->newest[first] = id;
	return id;
}

/* The location of a caller's return address `ip` at `time`. The runtime's
 * walk gives return addresses for every frame, the leaf's too: it called
 * into the runtime. */
static uint32_t code_location(struct builder *builder, uint64_t ip, uint64_t time)
{
	uint32_t first =
	    profile_find_location(&builder->out->profile, (uint32_t)builder->pid, ip, false);
	struct resolved_location resolved;

	if (first != PROFILE_NOT_FOUND && time < builder->valid_until[builder->newest[first]])
		return builder->newest[first];
	resolver_set_time(builder->resolver, time);
	resolver_resolve(builder->resolver, builder->pid, ip, false, true, &resolved);
	return keep_location(builder, ip, &resolved);
}

/* The leaf frame naming `type` (interned in the stacks' table), at an
 * address of its own that no code has: the type's number, from 1 (the
 * first page is never mapped). */
static uint32_t type_location(struct builder *builder, const char *type)
{
	bool added;
	uint64_t address = (uint64_t)id_map_get(&builder->types, (uintptr_t)type, 0, &added) + 1;
	struct resolved_location resolved = {
	    .module = RUNTIME_PROFILE_TYPE_MODULE,
	    .kind = FRAME_JIT,
	    .frame_count = 1,
	    .frames = {{.function = type, .named = true}},
	    .valid_until = UINT64_MAX,
	};

	if (!added)
		return profile_find_location(&builder->out->profile, (uint32_t)builder->pid,
					     address, false);
	return keep_location(builder, address, &resolved);
}

static bool has_named_frame(const struct profile *profile, const uint32_t *stack, size_t depth)
{
	for (size_t i = 0; i < depth; i++) {
		const struct profile_location *location = &profile->locations[stack[i]];

		for (uint32_t frame = 0; frame < location->frame_count; frame++)
			if (profile->frames[location->first_frame + frame].named)
				return true;
	}
	return false;
}

/* Thread names by tid, from the samples: the events carry none. */
struct thread_names {
	struct id_map tids;
	const char **names;
	size_t capacity;
	const char *process_name;
};

static void read_thread_names(const struct profile *samples, struct thread_names *names)
{
	*names = (struct thread_names){.process_name = "[unknown]"};
	for (size_t i = 0; samples && i < samples->sample_count; i++) {
		const struct profile_sample *sample = &samples->samples[i];
		uint32_t index = id_map_get(&names->tids, sample->tid, 0, NULL);

		grow_array((void **)&names->names, &names->capacity, index + 1,
			   sizeof(*names->names));
		names->names[index] = sample->thread_name;
		names->process_name = sample->process_name;
	}
}

/* A thread no sample saw is named as its process. */
static const char *thread_name(struct thread_names *names, uint64_t tid)
{
	bool added;
	uint32_t index = id_map_get(&names->tids, tid, 0, &added);

	if (added) {
		grow_array((void **)&names->names, &names->capacity, index + 1,
			   sizeof(*names->names));
		names->names[index] = names->process_name;
	}
	return names->names[index];
}

static void add_event(struct builder *builder, const struct runtime_stacks *stacks,
		      const struct runtime_stack_event *event, struct thread_names *names)
{
	struct profile *profile = &builder->out->profile;
	size_t depth = 0;
	bool named;

	if (event->type)
		builder->stack[depth++] = type_location(builder, event->type);
	for (size_t i = 0; i < event->depth; i++)
		builder->stack[depth++] =
		    code_location(builder, stacks->ips[event->first_ip + i], event->time);
	named = has_named_frame(profile, builder->stack + (event->type ? 1 : 0),
				depth - (event->type ? 1 : 0));
	if (!named)
		builder->out->unnamed_weight += event->weight;
	profile_add_sample(
	    profile, &(struct profile_sample){
			 .time = event->time,
			 .period = event->weight,
			 .pid = (uint32_t)builder->pid,
			 .tid = (uint32_t)event->thread_id,
			 .stack = profile_intern_stack(profile, builder->stack, depth),
			 .process_name = profile_intern_printable(profile, names->process_name),
			 .thread_name = profile_intern_printable(
			     profile, thread_name(names, event->thread_id)),
		     });
}

void runtime_profiles_build(const struct runtime_stacks *stacks, struct resolver *resolver,
			    pid_t pid, const struct profile *samples,
			    struct runtime_profile profiles[RUNTIME_STACK_KINDS])
{
	struct builder builders[RUNTIME_STACK_KINDS];
	size_t count_capacity[RUNTIME_STACK_KINDS] = {0}, owner_capacity = 0;
	struct thread_names names;

	read_thread_names(samples, &names);
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++) {
		profiles[kind] = (struct runtime_profile){0};
		profile_init(&profiles[kind].profile);
		builders[kind] =
		    (struct builder){.out = &profiles[kind], .resolver = resolver, .pid = pid};
	}
	for (size_t i = 0; i < stacks->count; i++) {
		const struct runtime_stack_event *event = &stacks->events[i];
		struct runtime_profile *out = &profiles[event->kind];

		add_event(&builders[event->kind], stacks, event, &names);
		grow_array((void **)&out->counts, &count_capacity[event->kind],
			   out->profile.sample_count, sizeof(*out->counts));
		out->counts[out->profile.sample_count - 1] = event->objects;
		if (event->kind != RUNTIME_STACK_CONTENTION)
			continue;
		grow_array((void **)&out->lock_owners, &owner_capacity, out->profile.sample_count,
			   sizeof(*out->lock_owners));
		out->lock_owners[out->profile.sample_count - 1] = event->lock_owner;
	}
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++) {
		free(builders[kind].newest);
		free(builders[kind].valid_until);
		id_map_release(&builders[kind].types);
	}
	id_map_release(&names.tids);
	free(names.names);
}

void runtime_profiles_release(struct runtime_profile profiles[RUNTIME_STACK_KINDS])
{
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++) {
		profile_release(&profiles[kind].profile);
		free(profiles[kind].counts);
		free(profiles[kind].lock_owners);
		profiles[kind] = (struct runtime_profile){0};
	}
}

#define SHOWN 10 /* places listed per profile */

/* A place events happened, and their weight there. */
struct place {
	const char *type, *site; /* interned; type NULL for waits */
	uint64_t count, weight;
};

/* Whether a readable name ("Assembly!Namespace.Type::Method") is the
 * runtime's own code that every wait or throw passes through: the lock's
 * slow path, the exception's dispatch. */
static bool is_runtime_machinery(const char *readable)
{
	const char *bang = strchr(readable, '!');
	const char *name = bang ? bang + 1 : readable;

	return !strncmp(name, "System.Threading.", 17) || !strncmp(name, "System.Runtime.EH::", 19);
}

/* The first named frame of `stack` past its type's that is not the
 * runtime's machinery (the wait's or throw's site), by its readable name;
 * "(no named frame)" when none is. */
static const char *site_of(const struct profile *profile, const struct profile_stack *stack,
			   bool typed, struct string_table *names)
{
	for (uint32_t level = typed ? 1 : 0; level < stack->depth; level++) {
		const struct profile_location *location =
		    &profile->locations[profile->stack_locations[stack->first + level]];

		for (uint32_t frame = 0; frame < location->frame_count; frame++) {
			const struct profile_frame *named =
			    &profile->frames[location->first_frame + frame];
			char *readable;
			const char *site;

			if (!named->named)
				continue;
			readable = managed_name_readable(named->function, false);
			site = string_table_intern(names, readable ? readable : named->function);
			free(readable);
			if (!is_runtime_machinery(site))
				return site;
		}
	}
	return "(no named frame)";
}

static int by_weight(const void *left, const void *right)
{
	const struct place *a = left, *b = right;

	if (a->weight != b->weight)
		return a->weight < b->weight ? 1 : -1;
	return strcmp(a->site, b->site);
}

/* The places of `runtime`'s samples, heaviest first (free them); their
 * count in `*count`. */
static struct place *places_of(const struct runtime_profile *runtime, struct string_table *names,
			       size_t *count)
{
	const struct profile *profile = &runtime->profile;
	struct id_map ids = {0};
	struct place *places = NULL;
	size_t capacity = 0;

	for (size_t i = 0; i < profile->sample_count; i++) {
		const struct profile_sample *sample = &profile->samples[i];
		const struct profile_stack *stack = &profile->stacks[sample->stack];
		const struct profile_location *leaf =
		    stack->depth ? &profile->locations[profile->stack_locations[stack->first]]
				 : NULL;
		bool typed = leaf && !strcmp(leaf->module, RUNTIME_PROFILE_TYPE_MODULE);
		const char *type = typed ? profile->frames[leaf->first_frame].function : NULL;
		const char *site = site_of(profile, stack, typed, names);
		bool added;
		uint32_t id = id_map_get(&ids, (uintptr_t)type, (uintptr_t)site, &added);

		if (added) {
			grow_array((void **)&places, &capacity, id + 1, sizeof(*places));
			places[id] = (struct place){type, site, 0, 0};
		}
		places[id].count += runtime->counts ? runtime->counts[i] : 1;
		places[id].weight += sample->period;
	}
	*count = ids.count;
	id_map_release(&ids);
	if (*count > 1)
		qsort(places, *count, sizeof(*places), by_weight);
	return places;
}

static uint64_t total_weight(const struct profile *profile)
{
	uint64_t total = 0;

	for (size_t i = 0; i < profile->sample_count; i++)
		total += profile->samples[i].period;
	return total;
}

static void print_profile(const struct runtime_profile *runtime, enum runtime_stack_kind kind,
			  FILE *out)
{
	static const char *const headings[RUNTIME_STACK_KINDS] = {
	    [RUNTIME_STACK_CONTENTION] = "lock contention by where threads waited",
	    [RUNTIME_STACK_EXCEPTION] = "exceptions by where they were thrown",
	    [RUNTIME_STACK_ALLOCATION] = "allocations (sampled) by where they were made",
	    [RUNTIME_STACK_WAIT] = "waits on wait handles by where threads waited",
	};
	struct string_table *names = string_table_new();
	uint64_t total = total_weight(&runtime->profile);
	size_t count;
	struct place *places = places_of(runtime, names, &count);

	fprintf(out, "profcpu: %s: %zu events, %.1f%% under no named frame\n", headings[kind],
		runtime->profile.sample_count,
		total ? 100.0 * (double)runtime->unnamed_weight / (double)total : 0.0);
	for (size_t i = 0; i < count && i < SHOWN; i++) {
		const struct place *place = &places[i];

		if (kind == RUNTIME_STACK_CONTENTION || kind == RUNTIME_STACK_WAIT)
			fprintf(out, "    %10.1f ms %7llu waits  %s\n", (double)place->weight / 1e6,
				(unsigned long long)place->count, place->site);
		else if (kind == RUNTIME_STACK_EXCEPTION)
			fprintf(out, "    %8llu  %s  in %s\n", (unsigned long long)place->count,
				place->type, place->site);
		else
			fprintf(out, "    %10.1f MB  %s  in %s\n", (double)place->weight / 1e6,
				place->type, place->site);
	}
	free(places);
	string_table_free(names);
}

void runtime_profiles_print(const struct runtime_profile profiles[RUNTIME_STACK_KINDS], FILE *out)
{
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++)
		if (profiles[kind].profile.sample_count)
			print_profile(&profiles[kind], (enum runtime_stack_kind)kind, out);
}
