#include "watch_runtime.h"
#include "agent_runtime_sessions.h"
#include "event_options.h"
#include "runtime_trace.h"
#include "string_table.h"
#include "util.h"
#include "watch_counters.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the rules read, with the stacks the capture's profiles show. */
#define WATCH_RUNTIME_EVENTS "gc,exceptions,contention"
/* The capture's joined events stay within runtime_stacks' own bounds. */
#define MAX_JOINED_EVENTS 1000000
#define MAX_JOINED_IPS	  (16 << 20)
/* The sessions say two lines a second, for as long as the watch runs:
 * their log starts again past this. */
#define MAX_LOG_BYTES (1 << 20)

struct watch_runtime {
	struct agent_runtime_sessions *sessions;
	FILE *log;
	struct watch_runtime_part *parts; /* oldest first */
	size_t count, capacity;
	uint64_t started;  /* CLOCK_MONOTONIC nanoseconds */
	uint64_t bytes;	   /* of the parts kept */
	bool said_dropped; /* the bound was said in the log */
	bool counters;	   /* the parts carry System.Runtime's counters */
};

struct watch_runtime *watch_runtime_start(const struct target_process *target, const char *ring_dir,
					  const char *log_path, bool counters)
{
	struct event_options events = {.events = WATCH_RUNTIME_EVENTS};
	struct eventpipe_config config;
	struct watch_runtime *runtime;
	FILE *log;

	if (event_options_config(&events, &config) <= 0)
		return NULL;
	if (!(log = fopen(log_path, "we"))) {
		report_error("cannot write %s: %s", log_path, strerror(errno));
		return NULL;
	}
	config.rundown = false; /* the perf map watch turned on names the frames */
	if (counters)
		config.providers[config.provider_count++] = watch_counters_provider();
	runtime = xcalloc(1, sizeof(*runtime));
	runtime->counters = counters;
	runtime->log = log;
	runtime->started = clock_nanoseconds(CLOCK_MONOTONIC);
	runtime->sessions = agent_runtime_sessions_start(&config, ring_dir, log);
	agent_runtime_sessions_watch(runtime->sessions, target->pid);
	return runtime;
}

/* The parts but the first `dropped` (their files gone) stay. */
static void remove_first(struct watch_runtime *runtime, size_t dropped)
{
	if (!dropped)
		return;
	memmove(runtime->parts, runtime->parts + dropped,
		(runtime->count - dropped) * sizeof(*runtime->parts));
	runtime->count -= dropped;
}

/* What `part`'s events within its times say. Returns false when its
 * nettrace gives nothing (said in the log). */
static bool read_part(const struct watch_runtime_part *part, bool counters, FILE *log,
		      struct watch_runtime_period *read)
{
	struct runtime_trace trace;
	int status = runtime_trace_read(part->path, &trace);

	*read = (struct watch_runtime_period){.from = part->from, .until = part->until};
	/* A trace cut short (its bound, the process's exit) gives what it holds. */
	if (status < 0 && !trace.events.events) {
		fprintf(log, "runtime events: %s: %s\n", part->path, trace.why);
		runtime_trace_release(&trace);
		return false;
	}
	for (size_t i = 0; i < trace.stacks.count; i++) {
		const struct runtime_stack_event *event = &trace.stacks.events[i];

		if (event->time < part->from || event->time >= part->until)
			continue; /* the session before or after has it */
		if (event->kind == RUNTIME_STACK_EXCEPTION)
			read->exceptions++;
		else if (event->kind == RUNTIME_STACK_CONTENTION)
			read->contention_ms += (double)event->weight / 1e6;
	}
	read->longest_gc_pause_ms = trace.events.gc_longest_pause_seconds * 1e3;
	runtime_trace_release(&trace);
	/* A second pass over the part, for the counters alone. */
	if (counters)
		read->has_threadpool_queue = watch_counters_highest(
		    part->path, "threadpool-queue-length", &read->threadpool_queue);
	return true;
}

/* Keeps the parts within WATCH_RUNTIME_MAX_BYTES, the oldest gone first. */
static void drop_past_bound(struct watch_runtime *runtime)
{
	size_t dropped = 0;

	while (runtime->count - dropped > 1 && runtime->bytes > WATCH_RUNTIME_MAX_BYTES) {
		struct watch_runtime_part *part = &runtime->parts[dropped++];

		runtime->bytes -= part->bytes;
		unlink(part->path);
		free(part->path);
	}
	if (dropped && !runtime->said_dropped)
		fprintf(runtime->log,
			"runtime events: the ring's nettraces passed %llu MiB: the oldest "
			"seconds' events were dropped\n",
			(unsigned long long)(WATCH_RUNTIME_MAX_BYTES >> 20));
	runtime->said_dropped |= dropped > 0;
	remove_first(runtime, dropped);
}

/* Starts the log again once it passes MAX_LOG_BYTES (the sessions'
 * threads write it too: under its lock). */
static void bound_log(FILE *log)
{
	flockfile(log);
	if (ftell(log) > MAX_LOG_BYTES) {
		fflush(log);
		if (ftruncate(fileno(log), 0) == 0) {
			rewind(log);
			fprintf(log, "runtime events: the log passed %d MiB: started again\n",
				MAX_LOG_BYTES >> 20);
		}
	}
	funlockfile(log);
}

/* Keeps the `count` parts `taken` (their paths now the runtime's), each
 * read into `*read`; whether one could be. */
static bool keep_parts(struct watch_runtime *runtime, struct agent_runtime_part *taken,
		       size_t count, struct watch_runtime_period *read)
{
	bool got = false;

	for (size_t i = 0; i < count; i++) {
		struct watch_runtime_part part = {
		    .path = taken[i].path, .from = taken[i].from, .until = taken[i].until};
		struct stat status;

		/* The first session's part starts when it was asked for; the
		 * session's end (its process exited) ends its part. */
		if (part.from < runtime->started)
			part.from = runtime->started;
		if (part.until == UINT64_MAX)
			part.until = clock_nanoseconds(CLOCK_MONOTONIC);
		part.bytes = stat(part.path, &status) == 0 ? (uint64_t)status.st_size : 0;
		got |= read_part(&part, runtime->counters, runtime->log, read);
		grow_array((void **)&runtime->parts, &runtime->capacity, runtime->count + 1,
			   sizeof(*runtime->parts));
		runtime->parts[runtime->count++] = part;
		runtime->bytes += part.bytes;
	}
	free(taken);
	drop_past_bound(runtime);
	return got;
}

bool watch_runtime_next_period(struct watch_runtime *runtime, unsigned long period,
			       double wait_seconds, struct watch_runtime_period *read)
{
	struct agent_runtime_part *taken;
	size_t count = 0;
	bool got = false;

	bound_log(runtime->log);
	agent_runtime_sessions_cut(runtime->sessions, period);
	/* The period before was cut a period ago: no wait, but at the end. */
	if (period > 0) {
		taken = agent_runtime_sessions_take(runtime->sessions, period - 1, wait_seconds,
						    &count);
		got = keep_parts(runtime, taken, count, read);
	}
	if (wait_seconds > 0) {
		taken =
		    agent_runtime_sessions_take(runtime->sessions, period, wait_seconds, &count);
		got |= keep_parts(runtime, taken, count, read);
	}
	return got;
}

uint64_t watch_runtime_kept_until(const struct watch_runtime *runtime)
{
	return runtime->count ? runtime->parts[runtime->count - 1].until : 0;
}

void watch_runtime_drop_before(struct watch_runtime *runtime, uint64_t keep_from)
{
	size_t dropped = 0;

	while (dropped < runtime->count && runtime->parts[dropped].until < keep_from) {
		runtime->bytes -= runtime->parts[dropped].bytes;
		unlink(runtime->parts[dropped].path);
		free(runtime->parts[dropped++].path);
	}
	remove_first(runtime, dropped);
}

const struct watch_runtime_part *watch_runtime_parts(const struct watch_runtime *runtime,
						     uint64_t from, uint64_t to, size_t *count)
{
	size_t first = 0;

	while (first < runtime->count && runtime->parts[first].until <= from)
		first++;
	*count = 0;
	while (first + *count < runtime->count && runtime->parts[first + *count].from <= to)
		(*count)++;
	return runtime->parts + first;
}

void watch_runtime_stop(struct watch_runtime *runtime)
{
	if (!runtime)
		return;
	agent_runtime_sessions_stop(runtime->sessions);
	watch_runtime_drop_before(runtime, UINT64_MAX);
	fclose(runtime->log);
	free(runtime->parts);
	free(runtime);
}

/* Adds the events of `part` (read into `trace`) within [from, to] to the
 * joined stacks, as many as the bounds allow. Returns false when they
 * stopped some. */
static bool join_stacks(struct runtime_stacks *joined, const struct runtime_trace *trace,
			const struct watch_runtime_part *part, uint64_t from, uint64_t to)
{
	const struct runtime_stacks *stacks = &trace->stacks;

	if (part->from > from)
		from = part->from;
	if (part->until < to)
		to = part->until;
	for (size_t i = 0; i < stacks->count; i++) {
		struct runtime_stack_event event = stacks->events[i];

		if (event.time < from || event.time >= to)
			continue;
		if (joined->count == MAX_JOINED_EVENTS ||
		    joined->ip_count + event.depth > MAX_JOINED_IPS)
			return false;
		grow_array((void **)&joined->events, &joined->capacity, joined->count + 1,
			   sizeof(*joined->events));
		grow_array((void **)&joined->ips, &joined->ip_capacity,
			   joined->ip_count + event.depth, sizeof(*joined->ips));
		memcpy(joined->ips + joined->ip_count, stacks->ips + event.first_ip,
		       event.depth * sizeof(*joined->ips));
		event.first_ip = joined->ip_count;
		event.type = event.type ? string_table_intern(joined->types, event.type) : NULL;
		joined->ip_count += event.depth;
		joined->events[joined->count++] = event;
		joined->seen[event.kind]++;
		joined->seen_weight[event.kind] += event.weight;
	}
	joined->allocations_sampled |= stacks->allocations_sampled;
	return true;
}

/* The GCs of a part: the flame graph's subtitle. */
static void join_gc(struct runtime_events *joined, const struct runtime_events *events)
{
	for (int generation = 0; generation < 3; generation++)
		joined->gc_count[generation] += events->gc_count[generation];
	joined->gc_other += events->gc_other;
	joined->gc_pause_seconds += events->gc_pause_seconds;
	if (events->gc_longest_pause_seconds > joined->gc_longest_pause_seconds)
		joined->gc_longest_pause_seconds = events->gc_longest_pause_seconds;
	joined->events += events->events;
}

int watch_runtime_trace_read(const char *dir, const struct watch_runtime_part *parts, size_t count,
			     uint64_t from, uint64_t to, FILE *log, struct runtime_trace *joined)
{
	size_t read = 0;
	bool whole = true;

	*joined = (struct runtime_trace){.status = -1};
	joined->stacks.types = string_table_new();
	/* One part at a time: the joined events hold their own copies. */
	for (size_t i = 0; i < count; i++) {
		char *path = xasprintf("%s/runtime-%zu.nettrace", dir, i + 1);
		struct runtime_trace part;

		if (runtime_trace_read(path, &part) < 0 && !part.events.events)
			fprintf(log, "runtime events: %s: %s\n", path, part.why);
		else {
			whole = whole && join_stacks(&joined->stacks, &part, &parts[i], from, to);
			join_gc(&joined->events, &part.events);
			joined->process_id = part.process_id;
			read++;
		}
		runtime_trace_release(&part);
		free(path);
	}
	if (!whole)
		fprintf(log,
			"runtime events: the window's events passed %d events or %d Mi frames: the "
			"later ones are left out of its profiles\n",
			MAX_JOINED_EVENTS, MAX_JOINED_IPS >> 20);
	joined->events.seconds = (double)(to - from) / 1e9;
	joined->status = read ? 0 : -1;
	if (!read)
		snprintf(joined->why, sizeof(joined->why), "no part could be read");
	return joined->status;
}
