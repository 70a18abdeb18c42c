/* Records waiting for their turn, handed back in time order (equal times in
 * the order they were added).
 *
 * perf.data holds each CPU's ring buffer in time order: a round between two
 * PERF_RECORD_FINISHED_ROUNDs is a few ascending runs, one per CPU, after
 * what earlier rounds left. So instead of sorting everything kept at each
 * round, the queue finds those runs and merges them, which costs a pass over
 * the records and a few comparisons each, and no copying of the ones it
 * hands back. Any order of records is still handled (a run of one record
 * each at worst: a heap sort). */
#ifndef PROFCPU_TIME_ORDER_H
#define PROFCPU_TIME_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct time_order_entry {
	uint64_t time;
	uint64_t sequence; /* the order of adding, for equal times */
	void *record;	   /* the caller's */
};

/* An ascending run of entries being merged: entries[next .. end). */
struct time_order_run {
	size_t next, end;
};

struct time_order {
	struct time_order_entry *entries; /* in the order added, but for what
					     earlier takes left: their runs */
	size_t count, capacity;
	uint64_t next_sequence;
	struct time_order_run *runs; /* a heap by each run's next entry */
	size_t run_count, run_capacity;
};

/* Queues `record` at `time`. Start from a zeroed struct time_order. */
void time_order_add(struct time_order *queue, uint64_t time, void *record);

/* Calls `visit` for each queued record of time `until` or earlier, in
 * (time, order added) order, and drops them from the queue; `visit` must
 * not add records. */
void time_order_take_until(struct time_order *queue, uint64_t until,
			   void (*visit)(void *record, void *context), void *context);

/* How many records are queued. */
size_t time_order_count(const struct time_order *queue);

void time_order_release(struct time_order *queue);

#endif
