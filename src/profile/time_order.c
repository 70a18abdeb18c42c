#include "time_order.h"
#include "util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool comes_before(const struct time_order_entry *a, const struct time_order_entry *b)
{
	return a->time < b->time || (a->time == b->time && a->sequence < b->sequence);
}

void time_order_add(struct time_order *queue, uint64_t time, void *record)
{
	grow_array((void **)&queue->entries, &queue->capacity, queue->count + 1,
		   sizeof(*queue->entries));
	queue->entries[queue->count++] =
	    (struct time_order_entry){time, queue->next_sequence++, record};
}

size_t time_order_count(const struct time_order *queue)
{
	return queue->count;
}

static void add_run(struct time_order *queue, size_t start, size_t end)
{
	grow_array((void **)&queue->runs, &queue->run_capacity, queue->run_count + 1,
		   sizeof(*queue->runs));
	queue->runs[queue->run_count++] = (struct time_order_run){start, end};
}

/* Cuts the queue into its ascending runs. */
static void find_runs(struct time_order *queue)
{
	size_t start = 0;

	queue->run_count = 0;
	for (size_t i = 1; i < queue->count; i++)
		if (comes_before(&queue->entries[i], &queue->entries[i - 1])) {
			add_run(queue, start, i);
			start = i;
		}
	if (queue->count)
		add_run(queue, start, queue->count);
}

static bool run_comes_before(const struct time_order *queue, size_t a, size_t b)
{
	return comes_before(&queue->entries[queue->runs[a].next],
			    &queue->entries[queue->runs[b].next]);
}

/* Restores the heap below `parent`, whose run's next entry may have grown. */
static void sift_down(struct time_order *queue, size_t parent)
{
	for (;;) {
		size_t child = 2 * parent + 1, smallest = parent;
		struct time_order_run swap;

		if (child < queue->run_count && run_comes_before(queue, child, smallest))
			smallest = child;
		if (child + 1 < queue->run_count && run_comes_before(queue, child + 1, smallest))
			smallest = child + 1;
		if (smallest == parent)
			return;
		swap = queue->runs[parent];
		queue->runs[parent] = queue->runs[smallest];
		queue->runs[smallest] = swap;
		parent = smallest;
	}
}

static int compare_run_positions(const void *a, const void *b)
{
	const struct time_order_run *x = a, *y = b;

	return (x->next > y->next) - (x->next < y->next);
}

/* Moves what is left of each run to the front, in file order: each part
 * stays ascending, so the next take finds it as a run again. */
static void keep_rest(struct time_order *queue)
{
	size_t kept = 0;

	if (queue->run_count > 1)
		qsort(queue->runs, queue->run_count, sizeof(*queue->runs), compare_run_positions);
	for (size_t i = 0; i < queue->run_count; i++) {
		size_t length = queue->runs[i].end - queue->runs[i].next;

		if (kept != queue->runs[i].next)
			memmove(&queue->entries[kept], &queue->entries[queue->runs[i].next],
				length * sizeof(*queue->entries));
		kept += length;
	}
	queue->count = kept;
}

void time_order_take_until(struct time_order *queue, uint64_t until,
			   void (*visit)(void *record, void *context), void *context)
{
	find_runs(queue);
	for (size_t i = queue->run_count; i-- > 0;)
		sift_down(queue, i);
	while (queue->run_count) {
		struct time_order_run *first = &queue->runs[0];
		const struct time_order_entry *entry = &queue->entries[first->next];

		if (entry->time > until)
			break;
		visit(entry->record, context);
		if (++first->next == first->end)
			*first = queue->runs[--queue->run_count];
		sift_down(queue, 0);
	}
	keep_rest(queue);
}

void time_order_release(struct time_order *queue)
{
	free(queue->entries);
	free(queue->runs);
	*queue = (struct time_order){0};
}
