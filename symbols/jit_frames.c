#include "jit_frames.h"

#include <stdlib.h>

/* An open-addressing hash table, at most half full. */
struct slot {
	uint64_t start, time;
	bool used;
	struct jit_frame frame;
};

struct jit_frames {
	struct slot *slots;
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
static struct slot *slot_of(const struct jit_frames *frames, uint64_t start, uint64_t time)
{
	size_t index = first_slot(frames, start, time);

	while (frames->slots[index].used &&
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
		if (frames->slots[i].used)
			*slot_of(&bigger, frames->slots[i].start, frames->slots[i].time) =
			    frames->slots[i];
	free(frames->slots);
	bigger.used = frames->used;
	*frames = bigger;
	return true;
}

bool jit_frames_add(struct jit_frames *frames, uint64_t start, uint64_t time,
		    const struct jit_frame *frame)
{
	struct slot *slot;

	if ((frames->used + 1) * 2 > frames->capacity && !grow(frames))
		return false;
	slot = slot_of(frames, start, time);
	frames->used += !slot->used;
	*slot = (struct slot){.start = start, .time = time, .used = true, .frame = *frame};
	return true;
}

const struct jit_frame *jit_frames_find(const struct jit_frames *frames, uint64_t start,
					uint64_t time)
{
	const struct slot *slot;

	if (frames->capacity == 0)
		return NULL;
	slot = slot_of(frames, start, time);
	return slot->used ? &slot->frame : NULL;
}
