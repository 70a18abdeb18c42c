#include "runtime_stacks.h"
#include "id_map.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
/* Bounds on what a hostile trace can make this keep. */
#define MAX_EVENTS	1000000
#define MAX_IPS		(16u << 20) /* 128 MiB of stacks */
#define MAX_DEPTH	256	    /* the runtime walks at most 100 frames */
#define MAX_THREADS	65536
#define MAX_DURATION_NS 1e15 /* a wait longer than 11 days is not one */

/* Event ids of the runtime provider (ClrEtwAll.man). */
enum {
	EVENT_GC_ALLOCATION_TICK = 10,
	EVENT_EXCEPTION_THROWN = 80,
	EVENT_CONTENTION_START = 81,
	EVENT_CONTENTION_STOP = 91,
	EVENT_WAIT_HANDLE_WAIT_START = 301,
	EVENT_WAIT_HANDLE_WAIT_STOP = 302,
	EVENT_ALLOCATION_SAMPLED = 303,
};

/* AllocationSampled's chance for each byte allocated to be the one
 * sampled (docs/design/features/RandomizedAllocationSampling.md in
 * dotnet/runtime). */
#define SAMPLED_BYTE_PROBABILITY (1.0 / 102400)

/* A thread's wait, from its Start event to its Stop. */
struct pending_wait {
	bool waiting;
	uint64_t start; /* nanoseconds */
	size_t event;	/* the kept wait in stacks->events, or SIZE_MAX */
};

/* A thread waits for a lock (Contention) or a wait handle, not both. */
struct waiting_thread {
	struct pending_wait lock, handle;
};

struct runtime_stacks_reading {
	struct runtime_stacks *stacks;
	const struct nettrace_info *info;
	struct id_map thread_ids; /* OS thread id -> index in threads */
	struct waiting_thread *threads;
	size_t thread_capacity;
	uint64_t ticks, samples; /* allocation events of each kind */
	uint64_t last_time;	 /* of the latest event, nanoseconds */
};

/* Nanoseconds of CLOCK_MONOTONIC, the clock of the runtime's timestamps on
 * Linux (QueryPerformanceCounter) and of the samples. */
static uint64_t to_nanoseconds(const struct nettrace_info *info, uint64_t ticks)
{
	if (info->ticks_per_second == 1000000000 || info->ticks_per_second == 0)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / info->ticks_per_second);
}

/* Keeps `event`'s stack as one of `kind`; NULL past the bounds. */
static struct runtime_stack_event *keep(struct runtime_stacks_reading *reading,
					const struct nettrace_event *event,
					enum runtime_stack_kind kind)
{
	struct runtime_stacks *stacks = reading->stacks;
	size_t pointer_size = reading->info->pointer_size == 4 ? 4 : 8;
	size_t depth = event->stack_depth < MAX_DEPTH ? event->stack_depth : MAX_DEPTH;
	struct runtime_stack_event *kept;

	if (stacks->count == MAX_EVENTS || stacks->ip_count + depth > MAX_IPS)
		return NULL;
	grow_array((void **)&stacks->ips, &stacks->ip_capacity, stacks->ip_count + depth + 1,
		   sizeof(*stacks->ips));
	for (size_t i = 0; i < depth; i++) {
		uint64_t ip = 0;

		memcpy(&ip, event->stack + i * pointer_size, pointer_size);
		stacks->ips[stacks->ip_count + i] = ip;
	}
	grow_array((void **)&stacks->events, &stacks->capacity, stacks->count + 1,
		   sizeof(*stacks->events));
	kept = &stacks->events[stacks->count++];
	*kept = (struct runtime_stack_event){
	    .kind = kind,
	    .time = to_nanoseconds(reading->info, event->timestamp),
	    .thread_id = event->thread_id,
	    .weight = 1,
	    .objects = 1,
	    .first_ip = stacks->ip_count,
	    .depth = depth,
	};
	stacks->ip_count += depth;
	return kept;
}

/* The wait state of a thread, or NULL once MAX_THREADS threads are known
 * (a hostile trace's: the waits of the threads past it are not paired,
 * nor, to keep each look-up short, those after them). */
static struct waiting_thread *thread_of(struct runtime_stacks_reading *reading, uint64_t thread_id)
{
	bool added;
	uint32_t index;

	if (reading->thread_ids.count == MAX_THREADS)
		return NULL;
	index = id_map_get(&reading->thread_ids, thread_id, 0, &added);
	if (added) {
		grow_array((void **)&reading->threads, &reading->thread_capacity, index + 1,
			   sizeof(*reading->threads));
		reading->threads[index] = (struct waiting_thread){0};
	}
	return &reading->threads[index];
}

/* A Start event keeps the stack of a wait of `kind`; the same thread's
 * Stop gives its length: `duration_ns` when the Stop says (above 0), else
 * the time between the two. The stream groups events by thread, not by
 * time, so the pair is the thread's. */
static struct runtime_stack_event *on_wait_start(struct runtime_stacks_reading *reading,
						 const struct nettrace_event *event,
						 enum runtime_stack_kind kind,
						 struct pending_wait *wait)
{
	struct runtime_stack_event *kept = keep(reading, event, kind);

	*wait = (struct pending_wait){true, to_nanoseconds(reading->info, event->timestamp),
				      kept ? (size_t)(kept - reading->stacks->events) : SIZE_MAX};
	if (kept)
		kept->weight = 0; /* until the wait ends */
	return kept;
}

static void on_wait_stop(struct runtime_stacks_reading *reading, const struct nettrace_event *event,
			 enum runtime_stack_kind kind, struct pending_wait *wait,
			 double duration_ns)
{
	struct runtime_stacks *stacks = reading->stacks;
	uint64_t now = to_nanoseconds(reading->info, event->timestamp), duration;

	if (!wait->waiting)
		return;
	wait->waiting = false;
	if (duration_ns > 0)
		duration = duration_ns < MAX_DURATION_NS ? (uint64_t)duration_ns : 0;
	else
		duration = now > wait->start ? now - wait->start : 0;
	stacks->seen[kind]++;
	stacks->seen_weight[kind] += duration;
	if (wait->event != SIZE_MAX)
		stacks->events[wait->event].weight = duration;
}

/* ContentionStart's V2 (.NET 8 and later; V0 and V1 have only the flags
 * and instance id): ContentionFlags (u8), ClrInstanceID (u16), LockID
 * (pointer), AssociatedObjectID (pointer), LockOwnerThreadID (u64): the OS
 * thread id (not the managed one: so for Monitor's locks on .NET 8 and 10,
 * tests/collect_runtime_profiles.sh) of the thread holding the lock when
 * the wait began, 0 when the runtime did not know it. */
static uint64_t lock_owner_of(const struct runtime_stacks_reading *reading,
			      const struct nettrace_event *event)
{
	size_t pointer_size = reading->info->pointer_size == 4 ? 4 : 8;
	size_t owner_at = 3 + 2 * pointer_size;
	uint64_t owner;

	if (event->version < 2 || event->payload_size < owner_at + sizeof(owner))
		return 0;
	memcpy(&owner, event->payload + owner_at, sizeof(owner));
	return owner;
}

/* ContentionStart and ContentionStop, whose V1 carries the wait's length
 * (DurationNs, a double after its flags and instance id). */
static void on_contention(struct runtime_stacks_reading *reading,
			  const struct nettrace_event *event)
{
	struct waiting_thread *thread = thread_of(reading, event->thread_id);
	struct runtime_stack_event *kept;
	double duration_ns = 0;

	if (!thread)
		return;
	if (event->id == EVENT_CONTENTION_START) {
		kept = on_wait_start(reading, event, RUNTIME_STACK_CONTENTION, &thread->lock);
		if (kept)
			kept->lock_owner = lock_owner_of(reading, event);
		return;
	}
	if (event->version >= 1 && event->payload_size >= 11) {
		memcpy(&duration_ns, event->payload + 3, sizeof(duration_ns));
		if (!(duration_ns > 0)) /* NaN, or no wait: the timestamps say */
			duration_ns = 0;
	}
	on_wait_stop(reading, event, RUNTIME_STACK_CONTENTION, &thread->lock, duration_ns);
}

/* WaitHandleWaitStart and Stop (.NET 9 and later): a wait on a wait handle
 * or in Monitor.Wait that blocked. */
static void on_wait_handle(struct runtime_stacks_reading *reading,
			   const struct nettrace_event *event)
{
	struct waiting_thread *thread = thread_of(reading, event->thread_id);

	if (!thread)
		return;
	if (event->id == EVENT_WAIT_HANDLE_WAIT_START)
		on_wait_start(reading, event, RUNTIME_STACK_WAIT, &thread->handle);
	else
		on_wait_stop(reading, event, RUNTIME_STACK_WAIT, &thread->handle, 0);
}

static void on_exception(struct runtime_stacks_reading *reading, const struct nettrace_event *event)
{
	const uint8_t *payload = event->payload;
	size_t remaining = event->payload_size;
	char type[256];
	struct runtime_stack_event *kept;

	if (!nettrace_read_string(&payload, &remaining, type, sizeof(type)))
		return;
	reading->stacks->seen[RUNTIME_STACK_EXCEPTION]++;
	reading->stacks->seen_weight[RUNTIME_STACK_EXCEPTION]++;
	if ((kept = keep(reading, event, RUNTIME_STACK_EXCEPTION)))
		kept->type = string_table_intern(reading->stacks->types, type);
}

/* GCAllocationTick_V2 and later: AllocationAmount (u32), AllocationKind
 * (u32), ClrInstanceID (u16), AllocationAmount64 (u64), TypeID (pointer),
 * TypeName, HeapIndex (u32); V3 adds Address (pointer), V4 ObjectSize
 * (u64). The bytes are those allocated since the heap's last tick, the
 * type that of the object that crossed the mark: a sample of them. */
static void on_allocation_tick(struct runtime_stacks_reading *reading,
			       const struct nettrace_event *event)
{
	size_t pointer_size = reading->info->pointer_size == 4 ? 4 : 8;
	size_t names_at = 18 + pointer_size;
	const uint8_t *payload = event->payload + names_at;
	size_t remaining;
	uint64_t amount, object_size = 0;
	char type[256];
	struct runtime_stack_event *kept;

	if (event->version < 2 || event->payload_size <= names_at)
		return;
	remaining = event->payload_size - names_at;
	memcpy(&amount, event->payload + 10, sizeof(amount));
	if (!nettrace_read_string(&payload, &remaining, type, sizeof(type)))
		return;
	/* HeapIndex, Address, then ObjectSize. */
	if (event->version >= 4 && remaining >= 4 + pointer_size + 8)
		memcpy(&object_size, payload + 4 + pointer_size, sizeof(object_size));
	reading->ticks++;
	if (!(kept = keep(reading, event, RUNTIME_STACK_ALLOCATION)))
		return;
	kept->weight = amount;
	/* The objects the bytes stand for, if all were the sampled one's size. */
	kept->objects = object_size && amount / object_size ? amount / object_size : 1;
	kept->type = string_table_intern(reading->stacks->types, type);
}

/* AllocationSampled (.NET 10): AllocationKind (u32), ClrInstanceID (u16),
 * TypeID (pointer), TypeName, then Address (pointer), ObjectSize (u64) and
 * SampledByteOffset (u64) at the payload's end (some manifests put a
 * HeapIndex before Address). Each of the object's bytes had the same
 * chance to be sampled: an object of S bytes was with the chance
 * 1 - (1 - p)^S, and counting it as 1 / that objects, S / that bytes,
 * estimates without bias what the thread allocated. */
static void on_allocation_sampled(struct runtime_stacks_reading *reading,
				  const struct nettrace_event *event)
{
	size_t pointer_size = reading->info->pointer_size == 4 ? 4 : 8;
	size_t names_at = 6 + pointer_size;
	const uint8_t *payload = event->payload + names_at;
	size_t remaining;
	uint64_t object_size, offset;
	double chance;
	char type[256];
	struct runtime_stack_event *kept;

	if (event->payload_size <= names_at)
		return;
	remaining = event->payload_size - names_at;
	if (!nettrace_read_string(&payload, &remaining, type, sizeof(type)) ||
	    remaining < pointer_size + 16)
		return;
	memcpy(&object_size, event->payload + event->payload_size - 16, 8);
	memcpy(&offset, event->payload + event->payload_size - 8, 8);
	if (object_size == 0 || offset >= object_size || object_size > (1ull << 40))
		return;
	chance = -expm1((double)object_size * log1p(-SAMPLED_BYTE_PROBABILITY));
	reading->samples++;
	if (!(kept = keep(reading, event, RUNTIME_STACK_ALLOCATION)))
		return;
	kept->weight = (uint64_t)llround((double)object_size / chance);
	kept->objects = (uint64_t)llround(1 / chance);
	kept->sampled = true;
	kept->type = string_table_intern(reading->stacks->types, type);
}

void runtime_stacks_reading_take(struct runtime_stacks_reading *reading,
				 const struct nettrace_event *event)
{
	uint64_t time = to_nanoseconds(reading->info, event->timestamp);

	if (time > reading->last_time)
		reading->last_time = time;
	if (strcmp(event->provider, RUNTIME_PROVIDER))
		return;
	switch (event->id) {
	case EVENT_CONTENTION_START:
	case EVENT_CONTENTION_STOP:
		on_contention(reading, event);
		break;
	case EVENT_WAIT_HANDLE_WAIT_START:
	case EVENT_WAIT_HANDLE_WAIT_STOP:
		on_wait_handle(reading, event);
		break;
	case EVENT_EXCEPTION_THROWN:
		on_exception(reading, event);
		break;
	case EVENT_GC_ALLOCATION_TICK:
		on_allocation_tick(reading, event);
		break;
	case EVENT_ALLOCATION_SAMPLED:
		on_allocation_sampled(reading, event);
		break;
	}
}

struct runtime_stacks_reading *runtime_stacks_reading_start(struct runtime_stacks *stacks,
							    const struct nettrace_info *info)
{
	struct runtime_stacks_reading *reading = xcalloc(1, sizeof(*reading));

	*stacks = (struct runtime_stacks){.types = string_table_new()};
	reading->stacks = stacks;
	reading->info = info;
	return reading;
}

/* A wait still going on when the session stopped (a thread blocked for
 * good, a deadlock) lasted at least until the trace's last event: it is
 * counted until then. */
static void end_waits_at_the_end(struct runtime_stacks_reading *reading)
{
	for (size_t i = 0; i < reading->thread_ids.count; i++) {
		struct waiting_thread *thread = &reading->threads[i];
		struct pending_wait *waits[] = {&thread->lock, &thread->handle};
		enum runtime_stack_kind kinds[] = {RUNTIME_STACK_CONTENTION, RUNTIME_STACK_WAIT};

		for (size_t j = 0; j < 2; j++) {
			uint64_t duration = reading->last_time > waits[j]->start
						? reading->last_time - waits[j]->start
						: 0;

			if (!waits[j]->waiting || duration == 0)
				continue;
			reading->stacks->seen[kinds[j]]++;
			reading->stacks->seen_weight[kinds[j]] += duration;
			if (waits[j]->event != SIZE_MAX)
				reading->stacks->events[waits[j]->event].weight = duration;
		}
	}
}

/* What the allocation profile is made of: the randomized samples where
 * the trace has them (the ticks beside them would count the same bytes
 * twice), else the ticks. Waits of no length are left out. */
static void keep_what_counts(struct runtime_stacks_reading *reading)
{
	struct runtime_stacks *stacks = reading->stacks;
	size_t kept = 0;

	for (size_t i = 0; i < stacks->count; i++) {
		const struct runtime_stack_event *event = &stacks->events[i];

		if ((event->kind == RUNTIME_STACK_CONTENTION ||
		     event->kind == RUNTIME_STACK_WAIT) &&
		    event->weight == 0)
			continue;
		if (event->kind == RUNTIME_STACK_ALLOCATION &&
		    event->sampled != (reading->samples > 0))
			continue;
		stacks->events[kept++] = *event;
	}
	stacks->count = kept;
	stacks->allocations_sampled = reading->samples > 0;
	stacks->seen[RUNTIME_STACK_ALLOCATION] =
	    reading->samples ? reading->samples : reading->ticks;
	for (size_t i = 0; i < stacks->count; i++)
		if (stacks->events[i].kind == RUNTIME_STACK_ALLOCATION)
			stacks->seen_weight[RUNTIME_STACK_ALLOCATION] += stacks->events[i].weight;
}

void runtime_stacks_reading_finish(struct runtime_stacks_reading *reading)
{
	end_waits_at_the_end(reading);
	keep_what_counts(reading);
	id_map_release(&reading->thread_ids);
	free(reading->threads);
	free(reading);
}

void runtime_stacks_release(struct runtime_stacks *stacks)
{
	free(stacks->events);
	free(stacks->ips);
	if (stacks->types)
		string_table_free(stacks->types);
	*stacks = (struct runtime_stacks){0};
}
