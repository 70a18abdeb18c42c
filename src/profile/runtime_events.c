#include "runtime_events.h"
#include "runtime_methods.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"
#define SITE_FRAMES	 32 /* frames of a waiting stack kept to name its site */
#define SHOWN		 10 /* exception types and lock sites listed */
/* Bounds on what a hostile trace can make this keep. */
#define MAX_THREADS	1024
#define MAX_CONTENTIONS 100000 /* waits kept with their stacks */
#define MAX_METHODS	1000000

/* Event ids of the runtime providers (ClrEtwAll.man). */
enum runtime_event_id {
	EVENT_GC_START = 1,
	EVENT_GC_RESTART_EE_END = 3,
	EVENT_GC_SUSPEND_EE_BEGIN = 9,
	EVENT_EXCEPTION_THROWN = 80,
	EVENT_CONTENTION_START = 81,
	EVENT_CONTENTION_STOP = 91,
	EVENT_METHOD_LOAD_VERBOSE = 143,
	EVENT_METHOD_DC_END_VERBOSE = 144, /* the rundown's */
};

/* GCSuspendEEBegin's reasons that are a garbage collection's. */
#define SUSPEND_FOR_GC	    1
#define SUSPEND_FOR_GC_PREP 6

/* A thread between two events that pair up (suspension and restart, a
 * wait for a lock and its end). */
struct pending {
	uint64_t thread_id;
	bool gc_suspended; /* the thread suspended the runtime for a GC */
	uint64_t gc_suspend_time;
	bool waiting; /* for a lock, since wait_time, at the stack in ips */
	uint64_t wait_time;
	uint64_t ips[SITE_FRAMES];
	size_t depth;
};

struct contention {
	uint64_t ips[SITE_FRAMES];
	size_t depth;
	double seconds;
};

/* A method's code, named only if a wait's site needs it: from the event's
 * payload, which stays in the caller's bytes until the reading ends. */
struct method_range {
	uint64_t start, size;
	const uint8_t *payload;
	size_t payload_size;
	char *name; /* made when first asked for */
};

/* What reading collects before the summary is made. */
struct runtime_events_reading {
	struct runtime_events *events;
	uint64_t last_timestamp;
	struct pending *threads;
	size_t thread_count, thread_capacity;
	struct contention *contentions;
	size_t contention_count, contention_capacity;
	struct method_range *methods;
	size_t method_count, method_capacity;
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

static void copy_stack(const struct nettrace_event *event, uint32_t pointer_size, uint64_t *ips,
		       size_t *depth)
{
	*depth = 0;
	for (size_t i = 0; i < event->stack_depth && *depth < SITE_FRAMES; i++) {
		uint64_t ip = 0;

		memcpy(&ip, event->stack + i * pointer_size, pointer_size);
		ips[(*depth)++] = ip;
	}
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

static void on_contention_event(struct runtime_events_reading *reading,
				const struct nettrace_event *event)
{
	struct pending *thread = thread_state(reading, event->thread_id);
	struct contention *contention;
	double duration_ns;

	if (!thread)
		return;
	if (event->id == EVENT_CONTENTION_START) {
		thread->waiting = true;
		thread->wait_time = event->timestamp;
		copy_stack(event, reading->events->info.pointer_size, thread->ips, &thread->depth);
		return;
	}
	if (!thread->waiting || reading->contention_count == MAX_CONTENTIONS)
		return;
	thread->waiting = false;
	grow_array((void **)&reading->contentions, &reading->contention_capacity,
		   reading->contention_count + 1, sizeof(*reading->contentions));
	contention = &reading->contentions[reading->contention_count++];
	memcpy(contention->ips, thread->ips, sizeof(thread->ips));
	contention->depth = thread->depth;
	/* ContentionStop_V1 carries the wait's length after its flags and
	 * instance id; older ones leave the timestamps to tell. */
	if (event->version >= 1 && event->payload_size >= 11) {
		memcpy(&duration_ns, event->payload + 3, sizeof(duration_ns));
		contention->seconds = duration_ns > 0 && duration_ns < 1e15 ? duration_ns / 1e9 : 0;
	} else {
		contention->seconds =
		    event->timestamp > thread->wait_time
			? to_seconds(reading, event->timestamp - thread->wait_time)
			: 0;
	}
}

/* MethodLoadVerbose and the rundown's MethodDCEndVerbose: the code range
 * of a method and its name, Namespace.Type::Method. */
static void on_method_event(struct runtime_events_reading *reading,
			    const struct nettrace_event *event)
{
	uint64_t start, size = 0;

	/* MethodID, ModuleID, MethodStartAddress, MethodSize (u32), ... */
	if (reading->method_count == MAX_METHODS || event->payload_size <= 36)
		return;
	memcpy(&start, event->payload + 16, 8);
	memcpy(&size, event->payload + 24, 4);
	grow_array((void **)&reading->methods, &reading->method_capacity, reading->method_count + 1,
		   sizeof(*reading->methods));
	reading->methods[reading->method_count++] =
	    (struct method_range){start, size, event->payload, event->payload_size, NULL};
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
	} else if (runtime &&
		   (event->id == EVENT_CONTENTION_START || event->id == EVENT_CONTENTION_STOP))
		on_contention_event(reading, event);
	else if (runtime && event->id == EVENT_METHOD_LOAD_VERBOSE) {
		events->methods_jitted++;
		on_method_event(reading, event);
	} else if (!strcmp(event->provider, RUNDOWN_PROVIDER) &&
		   event->id == EVENT_METHOD_DC_END_VERBOSE) {
		events->rundown_methods++;
		on_method_event(reading, event);
	}
}

static int by_start(const void *left, const void *right)
{
	const struct method_range *a = left, *b = right;

	return (a->start > b->start) - (a->start < b->start);
}

/* Namespace.Type::Method of the method whose code holds ip, or NULL. */
static const char *method_at(struct runtime_events_reading *reading, uint64_t ip)
{
	struct method_range *method;
	struct runtime_method parsed;

	size_t low = 0, high = reading->method_count;

	while (low < high) { /* the last range starting at or below ip */
		size_t middle = (low + high) / 2;

		if (reading->methods[middle].start <= ip)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0 || ip - reading->methods[low - 1].start >= reading->methods[low - 1].size)
		return NULL;
	method = &reading->methods[low - 1];
	if (!method->name &&
	    runtime_method_parse(&(struct nettrace_event){.payload = method->payload,
							  .payload_size = method->payload_size},
				 &parsed))
		method->name = xasprintf("%s::%s", parsed.namespace_name, parsed.method_name);
	return method->name;
}

/* A wait's site: the first frame named by the method events that is not
 * the locking code itself (System.Threading), else the first named one. */
static const char *lock_site(struct runtime_events_reading *reading,
			     const struct contention *contention)
{
	const char *first = NULL;

	for (size_t i = 0; i < contention->depth; i++) {
		const char *name = method_at(reading, contention->ips[i]);

		if (!name)
			continue;
		if (strncmp(name, "System.Threading.", 17))
			return name;
		if (!first)
			first = name;
	}
	return first ? first : "(no managed frame named)";
}

static void summarize_contention(struct runtime_events_reading *reading)
{
	struct runtime_events *events = reading->events;

	if (reading->method_count)
		qsort(reading->methods, reading->method_count, sizeof(*reading->methods), by_start);
	for (size_t i = 0; i < reading->contention_count; i++) {
		struct runtime_tally *site =
		    tally(&events->lock_sites, lock_site(reading, &reading->contentions[i]));

		site->count++;
		site->seconds += reading->contentions[i].seconds;
		events->contentions++;
		events->contention_seconds += reading->contentions[i].seconds;
	}
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
	summarize_contention(reading);
	for (size_t i = 0; i < reading->method_count; i++)
		free(reading->methods[i].name);
	free(reading->methods);
	free(reading->contentions);
	free(reading->threads);
	free(reading);
}

void runtime_events_release(struct runtime_events *events)
{
	for (size_t i = 0; i < events->exceptions.count; i++)
		free(events->exceptions.items[i].name);
	for (size_t i = 0; i < events->lock_sites.count; i++)
		free(events->lock_sites.items[i].name);
	free(events->exceptions.items);
	free(events->lock_sites.items);
	*events = (struct runtime_events){0};
}

static int by_count(const void *left, const void *right)
{
	const struct runtime_tally *a = left, *b = right;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int by_time(const void *left, const void *right)
{
	const struct runtime_tally *a = left, *b = right;

	if (a->seconds != b->seconds)
		return a->seconds < b->seconds ? 1 : -1;
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
	sorted = sorted_copy(&events->lock_sites, by_time);
	for (size_t i = 0; i < events->lock_sites.count && i < SHOWN; i++)
		fprintf(out, "    %8.1f ms %6llu waits  %s\n", sorted[i].seconds * 1e3,
			(unsigned long long)sorted[i].count, sorted[i].name);
	free(sorted);
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
