#include "jit_frames.h"
#include "jit_prolog.h"

#include <stdlib.h>
#include <string.h>

/* An open-addressing hash table, at most half full. */
struct jit_frame {
	uint64_t start, time;
	uint8_t size; /* 0: an empty slot */
	uint8_t info[JIT_PROLOG_MAX_INFO];
};

struct jit_frames {
	struct jit_frame *slots;
	size_t capacity, used; /* capacity: a power of two, or 0 */
};

struct jit_frames *jit_frames_new(void)
{
	return calloc(1, sizeof(struct jit_frames));
}

void jit_frames_free(struct jit_frames *frames)
{
	if (!frames)
		return;
	free(frames->slots);
	free(frames);
}

static size_t first_slot(const struct jit_frames *frames, uint64_t start, uint64_t time)
{
	uint64_t hash = (start ^ time * 0x9e3779b97f4a7c15u) * 0xff51afd7ed558ccdu;

	return (size_t)(hash >> 32) & (frames->capacity - 1);
}

/* The slot holding that code's info, or the empty one where it goes. */
static struct jit_frame *slot_of(const struct jit_frames *frames, uint64_t start, uint64_t time)
{
	size_t index = first_slot(frames, start, time);

	while (frames->slots[index].size &&
	       (frames->slots[index].start != start || frames->slots[index].time != time))
		index = (index + 1) & (frames->capacity - 1);
	return &frames->slots[index];
}

static bool grow(struct jit_frames *frames)
{
	struct jit_frames bigger = {.capacity = frames->capacity ? frames->capacity * 2 : 1024};

	if (!(bigger.slots = calloc(bigger.capacity, sizeof(*bigger.slots))))
		return false;
	for (size_t i = 0; i < frames->capacity; i++)
		if (frames->slots[i].size)
			*slot_of(&bigger, frames->slots[i].start, frames->slots[i].time) =
			    frames->slots[i];
	free(frames->slots);
	bigger.used = frames->used;
	*frames = bigger;
	return true;
}

bool jit_frames_add(struct jit_frames *frames, uint64_t start, uint64_t time, const uint8_t *info,
		    size_t size)
{
	struct jit_frame *slot;

	if (size == 0 || size > JIT_PROLOG_MAX_INFO)
		return false;
	if ((frames->used + 1) * 2 > frames->capacity && !grow(frames))
		return false;
	slot = slot_of(frames, start, time);
	frames->used += slot->size == 0;
	*slot = (struct jit_frame){.start = start, .time = time, .size = (uint8_t)size};
	memcpy(slot->info, info, size);
	return true;
}

const uint8_t *jit_frames_find(const struct jit_frames *frames, uint64_t start, uint64_t time,
			       size_t *size)
{
	const struct jit_frame *slot;

	if (frames->capacity == 0)
		return NULL;
	slot = slot_of(frames, start, time);
	*size = slot->size;
	return slot->size ? slot->info : NULL;
}
