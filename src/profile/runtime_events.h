/* What a .NET runtime's events say about a capture (read from its
 * nettrace): garbage collections by generation and their pauses,
 * exceptions by type, lock contention in all and by the thread that held
 * the lock, and the methods jitted
 * meanwhile. Where the waits and exceptions were is their stacks'
 * (runtime_stacks.h), named later. */
#ifndef PROFCPU_RUNTIME_EVENTS_H
#define PROFCPU_RUNTIME_EVENTS_H

#include "nettrace.h"

#include <stdint.h>
#include <stdio.h>

/* A count per name (exception type). */
struct runtime_tally {
	char *name;
	uint64_t count;
};

struct runtime_tally_list {
	struct runtime_tally *items;
	size_t count, capacity;
};

/* A thread that held locks others waited on (as ContentionStart names it,
 * .NET 8 and later), and their waits behind it. */
struct runtime_lock_owner {
	uint64_t thread_id; /* OS thread id; 0: waits whose event named no holder */
	uint64_t waits, nanoseconds;
};

struct runtime_lock_owner_list {
	struct runtime_lock_owner *items;
	size_t count, capacity;
};

struct runtime_events {
	struct nettrace_info info;
	double seconds; /* from the session's start to its last event */
	uint64_t events;
	uint64_t gc_count[3], gc_other; /* by generation; gc_other: a bad depth */
	double gc_pause_seconds, gc_longest_pause_seconds;
	struct runtime_tally_list exceptions;
	uint64_t contentions; /* set by the reader of the stacks (runtime_trace.h) */
	double contention_seconds;
	struct runtime_lock_owner_list lock_owners; /* set with contentions, in no order */
	uint64_t methods_jitted;
	uint64_t rundown_methods; /* methods the rundown named */
};

/* Reading events one at a time, as nettrace_parse() passes them, beside
 * other readers of the same pass: start it on `events` (emptied), hand
 * nettrace_parse() &events->info, take each event, and finish (freeing the
 * reading) before the events' payloads go away. */
struct runtime_events_reading;

struct runtime_events_reading *runtime_events_reading_start(struct runtime_events *events);

void runtime_events_reading_take(struct runtime_events_reading *reading,
				 const struct nettrace_event *event);

void runtime_events_reading_finish(struct runtime_events_reading *reading);

void runtime_events_release(struct runtime_events *events);

/* The summary lines, for the terminal and the log. */
void runtime_events_print(const struct runtime_events *events, FILE *out);

/* "GC: 12 pauses, 34.5 ms (1.2%)" for a flame graph's subtitle (malloc'd),
 * or NULL when the events hold no GC. */
char *runtime_events_gc_note(const struct runtime_events *events);

#endif
