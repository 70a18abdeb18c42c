#include "runtime_events.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"
#define SHOWN		 10 /* exception types and lock holders listed */
/* Bounds on what a hostile trace can make this keep. */
#define MAX_THREADS 1024

/* Event ids of the runtime providers (ClrEtwAll.man). */
enum runtime_event_id {
	EVENT_GC_START = 1,
	EVENT_GC_RESTART_EE_END = 3,
	EVENT_GC_SUSPEND_EE_BEGIN = 9,
	EVENT_EXCEPTION_THROWN = 80,
	EVENT_METHOD_LOAD_VERBOSE = 143,
	EVENT_METHOD_DC_END_VERBOSE = 144, /* the rundown's */
};

/* GCSuspendEEBegin's reasons that are a garbage collection's. */
#define SUSPEND_FOR_GC	    1
#define SUSPEND_FOR_GC_PREP 6

/* A thread between a suspension and its restart. */
struct pending {
	uint64_t thread_id;
	bool gc_suspended; /* the thread suspended the runtime for a GC */
	uint64_t gc_suspend_time;
};

/* What reading collects before the summary is made. */
struct runtime_events_reading {
	struct runtime_events *events;
	uint64_t last_timestamp;
	struct pending *threads;
	size_t thread_count, thread_capacity;
};

/* The state of a thread, or NULL past MAX_THREADS threads. */
static struct pending *thread_state(struct runtime_events_reading *reading, uint64_t thread_id)
{
	for (size_t i = 0; i < reading->thread_count; i++)
		if (reading->threads[i].thread_id == thread_id)
			return &reading->threads[i];
	if (reading->thread_count == MAX_THREADS)
		return NULL;
	grow_array((void **)&reading->threads, &reading->thread_capacity, reading->thread_count + 1,
		   sizeof(*reading->threads));
	reading->threads[reading->thread_count] = (struct pending){.thread_id = thread_id};
	return &reading->threads[reading->thread_count++];
}

static struct runtime_tally *tally(struct runtime_tally_list *list, const char *name)
{
	for (size_t i = 0; i < list->count; i++)
		if (!strcmp(list->items[i].name, name))
			return &list->items[i];
	grow_array((void **)&list->items, &list->capacity, list->count + 1, sizeof(*list->items));
	list->items[list->count] = (struct runtime_tally){.name = xstrdup(name)};
	return &list->items[list->count++];
}

static double to_seconds(const struct runtime_events_reading *reading, uint64_t ticks)
{
	return (double)ticks / (double)reading->events->info.ticks_per_second;
}

static uint32_t payload_u32(const struct nettrace_event *event, size_t offset)
{
	uint32_t value = 0;

	if (offset + 4 <= event->payload_size)
		memcpy(&value, event->payload + offset, 4);
	return value;
}

/* The stream groups events by thread, not by time: a suspension pairs with
 * the restart of the same thread (the one that runs the GC). */
static void on_gc_event(struct runtime_events_reading *reading, const struct nettrace_event *event)
{
	struct runtime_events *events = reading->events;
	struct pending *thread = thread_state(reading, event->thread_id);

	if (event->id == EVENT_GC_START && event->payload_size >= 8) {
		uint32_t depth = payload_u32(event, 4);

		if (depth < 3)
			events->gc_count[depth]++;
		else
			events->gc_other++;
	} else if (!thread) {
		return;
	} else if (event->id == EVENT_GC_SUSPEND_EE_BEGIN) {
		uint32_t reason = payload_u32(event, 0);

		thread->gc_suspended = reason == SUSPEND_FOR_GC || reason == SUSPEND_FOR_GC_PREP;
		thread->gc_suspend_time = event->timestamp;
	} else if (event->id == EVENT_GC_RESTART_EE_END && thread->gc_suspended) {
		double pause = event->timestamp > thread->gc_suspend_time
				   ? to_seconds(reading, event->timestamp - thread->gc_suspend_time)
				   : 0;

		events->gc_pause_seconds += pause;
		if (pause > events->gc_longest_pause_seconds)
			events->gc_longest_pause_seconds = pause;
		thread->gc_suspended = false;
	}
}

void runtime_events_reading_take(struct runtime_events_reading *reading,
				 const struct nettrace_event *event)
{
	struct runtime_events *events = reading->events;
	bool runtime = !strcmp(event->provider, RUNTIME_PROVIDER);

	events->events++;
	if (event->timestamp > reading->last_timestamp)
		reading->last_timestamp = event->timestamp;
	if (runtime && event->id <= 10)
		on_gc_event(reading, event);
	else if (runtime && event->id == EVENT_EXCEPTION_THROWN) {
		const uint8_t *payload = event->payload;
		size_t remaining = event->payload_size;
		char type[256];

		if (nettrace_read_string(&payload, &remaining, type, sizeof(type)))
			tally(&events->exceptions, type)->count++;
	} else if (runtime && event->id == EVENT_METHOD_LOAD_VERBOSE)
		events->methods_jitted++;
	else if (!strcmp(event->provider, RUNDOWN_PROVIDER) &&
		 event->id == EVENT_METHOD_DC_END_VERBOSE)
		events->rundown_methods++;
}

struct runtime_events_reading *runtime_events_reading_start(struct runtime_events *events)
{
	struct runtime_events_reading *reading = xcalloc(1, sizeof(*reading));

	*events = (struct runtime_events){0};
	reading->events = events;
	return reading;
}

void runtime_events_reading_finish(struct runtime_events_reading *reading)
{
	struct runtime_events *events = reading->events;

	if (reading->last_timestamp > events->info.start_timestamp)
		events->seconds =
		    to_seconds(reading, reading->last_timestamp - events->info.start_timestamp);
	free(reading->threads);
	free(reading);
}

void runtime_events_release(struct runtime_events *events)
{
	for (size_t i = 0; i < events->exceptions.count; i++)
		free(events->exceptions.items[i].name);
	free(events->exceptions.items);
	free(events->lock_owners.items);
	*events = (struct runtime_events){0};
}

static int by_count(const void *left, const void *right)
{
	const struct runtime_tally *a = left, *b = right;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

static double share(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

static uint64_t gc_total(const struct runtime_events *events)
{
	return events->gc_count[0] + events->gc_count[1] + events->gc_count[2] + events->gc_other;
}

/* A sorted copy of the list (free it). */
static struct runtime_tally *sorted_copy(const struct runtime_tally_list *list,
					 int (*compare)(const void *, const void *))
{
	struct runtime_tally *copy = xcalloc(list->count + 1, sizeof(*copy));

	if (list->count) {
		memcpy(copy, list->items, list->count * sizeof(*copy));
		qsort(copy, list->count, sizeof(*copy), compare);
	}
	return copy;
}

static int by_time_waited(const void *left, const void *right)
{
	const struct runtime_lock_owner *a = left, *b = right;

	if (a->nanoseconds != b->nanoseconds)
		return a->nanoseconds < b->nanoseconds ? 1 : -1;
	return (a->thread_id > b->thread_id) - (a->thread_id < b->thread_id);
}

/* The threads that held the locks, most waited on first; nothing when no
 * event named one (before .NET 8). */
static void print_lock_owners(const struct runtime_events *events, FILE *out)
{
	const struct runtime_lock_owner_list *owners = &events->lock_owners;
	struct runtime_lock_owner *sorted;
	bool named = false;

	for (size_t i = 0; i < owners->count; i++)
		named |= owners->items[i].thread_id != 0;
	if (!named)
		return;
	sorted = xcalloc(owners->count, sizeof(*sorted));
	memcpy(sorted, owners->items, owners->count * sizeof(*sorted));
	qsort(sorted, owners->count, sizeof(*sorted), by_time_waited);
	fprintf(out, "    by the thread that held the lock:\n");
	for (size_t i = 0; i < owners->count && i < SHOWN; i++) {
		fprintf(out, "    %10.1f ms %7llu waits  ", (double)sorted[i].nanoseconds / 1e6,
			(unsigned long long)sorted[i].waits);
		if (sorted[i].thread_id)
			fprintf(out, "tid %llu\n", (unsigned long long)sorted[i].thread_id);
		else
			fprintf(out, "(not named)\n");
	}
	free(sorted);
}

static uint64_t exceptions_thrown(const struct runtime_events *events)
{
	uint64_t thrown = 0;

	for (size_t i = 0; i < events->exceptions.count; i++)
		thrown += events->exceptions.items[i].count;
	return thrown;
}

void runtime_events_print(const struct runtime_events *events, FILE *out)
{
	struct runtime_tally *sorted;

	fprintf(out, "runtime events: %llu over %.1f s\n", (unsigned long long)events->events,
		events->seconds);
	fprintf(out,
		"  GC: %llu collections (gen0 %llu, gen1 %llu, gen2 %llu); pauses %.1f ms in "
		"total (%.2f%% of the time), longest %.1f ms\n",
		(unsigned long long)gc_total(events), (unsigned long long)events->gc_count[0],
		(unsigned long long)events->gc_count[1], (unsigned long long)events->gc_count[2],
		events->gc_pause_seconds * 1e3, share(events->gc_pause_seconds, events->seconds),
		events->gc_longest_pause_seconds * 1e3);
	fprintf(out, "  exceptions: %llu thrown\n", (unsigned long long)exceptions_thrown(events));
	sorted = sorted_copy(&events->exceptions, by_count);
	for (size_t i = 0; i < events->exceptions.count && i < SHOWN; i++)
		fprintf(out, "    %8llu  %s\n", (unsigned long long)sorted[i].count,
			sorted[i].name);
	free(sorted);
	fprintf(out, "  lock contention: %llu waits, %.1f ms in total\n",
		(unsigned long long)events->contentions, events->contention_seconds * 1e3);
	print_lock_owners(events, out);
	fprintf(out, "  JIT: %llu methods jitted%s\n", (unsigned long long)events->methods_jitted,
		events->methods_jitted ? ""
				       : " (method loads are Verbose events: recorded with -gconly "
					 "or -events jit)");
}

char *runtime_events_gc_note(const struct runtime_events *events)
{
	if (!gc_total(events))
		return NULL;
	return xasprintf("GC: %llu collections, %.1f ms paused (%.2f%%), longest %.1f ms",
			 (unsigned long long)gc_total(events), events->gc_pause_seconds * 1e3,
			 share(events->gc_pause_seconds, events->seconds),
			 events->gc_longest_pause_seconds * 1e3);
}
