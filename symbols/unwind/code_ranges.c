#include "code_ranges.h"
#include "buffer.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Names are kept in blocks that never move: a block filled is never
 * copied, as one growing buffer was on each doubling (16,000 .NET methods
 * are a few MB of names). Each is mapped with its pages at once: faulting
 * them in one by one cost more than copying the names. */
#define NAME_BLOCK_SIZE (256u << 10)
/* Ranges looked at below an address: enough for code nested in a stub
 * block; a hostile file nesting more only loses names, not time. */
#define MAX_CANDIDATES 256

struct range {
	uint64_t start, size, time;
	size_t sequence;  /* order of adding: later wins among equal times */
	const char *name; /* in a name block, or NULL for code that is gone */
};

struct name_block {
	struct name_block *next;
	size_t used, size; /* of bytes */
	char bytes[];
};

struct code_ranges {
	struct range *ranges;
	size_t count, capacity, added;
	uint64_t *max_end; /* max_end[i]: the highest end of ranges[0..i] */
	size_t max_end_capacity;
	bool sorted;
	struct name_block *names; /* the one being filled first */
};

struct code_ranges *code_ranges_new(void)
{
	return calloc(1, sizeof(struct code_ranges));
}

void code_ranges_free(struct code_ranges *ranges)
{
	if (!ranges)
		return;
	free(ranges->ranges);
	free(ranges->max_end);
	while (ranges->names) {
		struct name_block *next = ranges->names->next;

		munmap(ranges->names, sizeof(*ranges->names) + ranges->names->size);
		ranges->names = next;
	}
	free(ranges);
}

static bool add_range(struct code_ranges *ranges, uint64_t start, uint64_t size, uint64_t time,
		      const char *name)
{
	if (size == 0 || size > CODE_RANGE_MAX_SIZE || start + size < start ||
	    !buffer_reserve((void **)&ranges->ranges, &ranges->capacity, ranges->count + 1,
			    sizeof(*ranges->ranges)))
		return false;
	ranges->ranges[ranges->count++] = (struct range){start, size, time, ranges->added++, name};
	ranges->sorted = false;
	return true;
}

/* Room for `length` bytes of names, or NULL when memory runs out. */
static char *name_room(struct code_ranges *ranges, size_t length)
{
	struct name_block *block = ranges->names;
	size_t size = length > NAME_BLOCK_SIZE ? length : NAME_BLOCK_SIZE;

	if (!block || block->size - block->used < length) {
		block = mmap(NULL, sizeof(*block) + size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (block == MAP_FAILED)
			return NULL;
		*block = (struct name_block){.next = ranges->names, .size = size};
		ranges->names = block;
	}
	return block->bytes + block->used;
}

bool code_ranges_add(struct code_ranges *ranges, uint64_t start, uint64_t size, uint64_t time,
		     const char *name, size_t length)
{
	char *kept;

	if (size == 0 || size > CODE_RANGE_MAX_SIZE || start + size < start ||
	    memchr(name, '\0', length) || length == SIZE_MAX ||
	    !(kept = name_room(ranges, length + 1)))
		return false;
	memcpy(kept, name, length);
	kept[length] = '\0';
	if (!add_range(ranges, start, size, time, kept))
		return false;
	ranges->names->used += length + 1;
	return true;
}

bool code_ranges_remove(struct code_ranges *ranges, uint64_t start, uint64_t size, uint64_t time)
{
	return add_range(ranges, start, size, time, NULL);
}

static int compare_ranges(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->sequence > y->sequence) - (x->sequence < y->sequence);
}

/* Sorts by start, keeps the latest range of each (start, time), and
 * computes the running highest end that bounds the backward search. */
static bool sort_ranges(struct code_ranges *ranges)
{
	size_t unique = 0;
	uint64_t highest = 0;

	if (!buffer_reserve((void **)&ranges->max_end, &ranges->max_end_capacity,
			    ranges->count ? ranges->count : 1, sizeof(*ranges->max_end)))
		return false;
	if (ranges->count > 1)
		qsort(ranges->ranges, ranges->count, sizeof(*ranges->ranges), compare_ranges);
	for (size_t i = 0; i < ranges->count; i++) {
		const struct range *range = &ranges->ranges[i];

		if (unique && ranges->ranges[unique - 1].start == range->start &&
		    ranges->ranges[unique - 1].time == range->time)
			unique--;
		ranges->ranges[unique++] = *range;
	}
	ranges->count = unique;
	for (size_t i = 0; i < ranges->count; i++) {
		uint64_t end = ranges->ranges[i].start + ranges->ranges[i].size;

		highest = end > highest ? end : highest;
		ranges->max_end[i] = highest;
	}
	ranges->sorted = true;
	return true;
}

/* Orders ranges as the lookup prefers them: by time, then by adding. */
static bool is_later(const struct range *x, const struct range *y)
{
	return x->time != y->time ? x->time > y->time : x->sequence > y->sequence;
}

bool code_ranges_lookup(struct code_ranges *ranges, uint64_t address, uint64_t time,
			struct code_range *found)
{
	const struct range *latest_before = NULL, *earliest = NULL, *chosen;
	size_t low = 0, high, looked = 0;
	uint64_t after;

	*found = (struct code_range){.valid_until = UINT64_MAX};
	if (!ranges->sorted && !sort_ranges(ranges))
		return false;
	high = ranges->count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (ranges->ranges[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	/* Ranges containing the address start at or below it and end above
	 * it: walk down while some range below can still reach it. */
	for (size_t i = low; i-- > 0 && ranges->max_end[i] > address && looked < MAX_CANDIDATES;
	     looked++) {
		const struct range *range = &ranges->ranges[i];

		if (address - range->start >= range->size)
			continue;
		if (range->time <= time && (!latest_before || is_later(range, latest_before)))
			latest_before = range;
		if (!earliest || is_later(earliest, range))
			earliest = range;
	}
	chosen = latest_before ? latest_before : earliest;
	if (!chosen)
		return false;
	/* The answer changes when the next containing range appears. */
	after = chosen->time > time ? chosen->time : time;
	for (size_t i = low, seen = 0;
	     i-- > 0 && ranges->max_end[i] > address && seen < MAX_CANDIDATES; seen++) {
		const struct range *range = &ranges->ranges[i];

		if (address - range->start < range->size && range->time > after &&
		    range->time < found->valid_until)
			found->valid_until = range->time;
	}
	found->start = chosen->start;
	found->size = chosen->size;
	found->time = chosen->time;
	found->name = chosen->name;
	return found->name != NULL;
}

size_t code_ranges_count(struct code_ranges *ranges)
{
	if (!ranges->sorted)
		sort_ranges(ranges);
	return ranges->count;
}
