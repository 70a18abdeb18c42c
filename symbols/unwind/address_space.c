#include "address_space.h"

#include <stdlib.h>
#include <string.h>

/* Sorted by start, never overlapping. */
struct address_space {
	struct mapping *mappings;
	size_t count, capacity;
};

static void *checked(void *pointer)
{
	if (!pointer)
		abort(); /* out of memory: the library has no better answer */
	return pointer;
}

struct address_space *address_space_new(void)
{
	return checked(calloc(1, sizeof(struct address_space)));
}

struct address_space *address_space_clone(const struct address_space *space)
{
	struct address_space *copy = address_space_new();

	copy->mappings = checked(malloc((space->count + 1) * sizeof(struct mapping)));
	copy->capacity = space->count + 1;
	copy->count = space->count;
	for (size_t i = 0; i < space->count; i++) {
		copy->mappings[i] = space->mappings[i];
		copy->mappings[i].path = checked(strdup(space->mappings[i].path));
	}
	return copy;
}

void address_space_free(struct address_space *space)
{
	if (!space)
		return;
	for (size_t i = 0; i < space->count; i++)
		free(space->mappings[i].path);
	free(space->mappings);
	free(space);
}

static void insert_at(struct address_space *space, size_t index, struct mapping mapping)
{
	if (space->count == space->capacity) {
		space->capacity = space->capacity ? space->capacity * 2 : 64;
		space->mappings =
		    checked(realloc(space->mappings, space->capacity * sizeof(mapping)));
	}
	memmove(&space->mappings[index + 1], &space->mappings[index],
		(space->count - index) * sizeof(mapping));
	space->mappings[index] = mapping;
	space->count++;
}

/* Index of the first mapping that ends after `address`. */
static size_t first_ending_after(const struct address_space *space, uint64_t address)
{
	size_t low = 0, high = space->count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (space->mappings[middle].end <= address)
			low = middle + 1;
		else
			high = middle;
	}
	return low;
}

void address_space_add(struct address_space *space, uint64_t start, uint64_t length,
		       uint64_t page_offset, const struct mapped_file *file)
{
	uint64_t end = start + length < start ? UINT64_MAX : start + length;
	size_t index = first_ending_after(space, start);

	if (length == 0)
		return;
	/* Cut away what the new mapping covers from the ones it overlaps. */
	while (index < space->count && space->mappings[index].start < end) {
		struct mapping *old = &space->mappings[index];

		if (old->start < start && old->end > end) { /* split in two */
			struct mapping tail = *old;

			tail.page_offset += end - old->start;
			tail.start = end;
			tail.path = checked(strdup(old->path));
			old->end = start;
			insert_at(space, index + 1, tail);
			index++;
			break;
		}
		if (old->start < start) {
			old->end = start;
			index++;
		} else if (old->end > end) {
			old->page_offset += end - old->start;
			old->start = end;
			break;
		} else {
			free(old->path);
			memmove(old, old + 1, (space->count - index - 1) * sizeof(*old));
			space->count--;
		}
	}
	insert_at(
	    space, first_ending_after(space, start),
	    (struct mapping){start, end, page_offset, checked(strdup(file->path)), file->identity});
}

const struct mapping *address_space_find(const struct address_space *space, uint64_t address)
{
	size_t index = first_ending_after(space, address);

	if (index < space->count && space->mappings[index].start <= address)
		return &space->mappings[index];
	return NULL;
}
