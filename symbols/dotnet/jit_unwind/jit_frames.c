#include "jit_frames.h"
#include "buffer.h"

#include <stdlib.h>
#include <string.h>

/* Each prolog kept, packed one after another: a byte giving its size (the
 * high bit set when it is the whole code), then its bytes. */
enum { WHOLE_CODE = 0x80 };

/* An open-addressing hash table, at most half full. */
struct slot {
	uint64_t start, time;
	uint32_t prolog; /* 1 + the prolog's offset in `prologs`; 0: an empty slot */
	/* NULL until read; `no_info` when the prolog gives none. */
	struct jit_frame *frame;
};

struct jit_frames {
	struct slot *slots;
	size_t capacity, used; /* capacity: a power of two, or 0 */
	uint8_t *prologs;
	size_t prologs_size, prologs_capacity;
};

/* What a slot's frame points to once its prolog was read for no info. */
static struct jit_frame no_info;

struct jit_frames *jit_frames_new(void)
{
	return calloc(1, sizeof(struct jit_frames));
}

void jit_frames_free(struct jit_frames *frames)
{
	if (!frames)
		return;
	for (size_t i = 0; i < frames->capacity; i++)
		if (frames->slots[i].frame != &no_info)
			free(frames->slots[i].frame);
	free(frames->slots);
	free(frames->prologs);
	free(frames);
}

static size_t first_slot(const struct jit_frames *frames, uint64_t start, uint64_t time)
{
	uint64_t hash = (start ^ time * 0x9e3779b97f4a7c15u) * 0xff51afd7ed558ccdu;

	return (size_t)(hash >> 32) & (frames->capacity - 1);
}

/* The slot holding that code's prolog, or the empty one where it goes. */
static struct slot *slot_of(const struct jit_frames *frames, uint64_t start, uint64_t time)
{
	size_t index = first_slot(frames, start, time);

	while (frames->slots[index].prolog &&
	       (frames->slots[index].start != start || frames->slots[index].time != time))
		index = (index + 1) & (frames->capacity - 1);
	return &frames->slots[index];
}

static bool grow(struct jit_frames *frames)
{
	struct jit_frames bigger = *frames;

	bigger.capacity = frames->capacity ? frames->capacity * 2 : 1024;
	if (!(bigger.slots = calloc(bigger.capacity, sizeof(*bigger.slots))))
		return false;
	for (size_t i = 0; i < frames->capacity; i++)
		if (frames->slots[i].prolog)
			*slot_of(&bigger, frames->slots[i].start, frames->slots[i].time) =
			    frames->slots[i];
	free(frames->slots);
	*frames = bigger;
	return true;
}

bool jit_frames_add(struct jit_frames *frames, uint64_t start, uint64_t time, const uint8_t *prolog,
		    size_t size, bool whole)
{
	struct slot *slot;

	if (size > JIT_PROLOG_CODE_BYTES)
		size = JIT_PROLOG_CODE_BYTES;
	if (frames->prologs_size + 1 + size > UINT32_MAX - 1 ||
	    !buffer_reserve((void **)&frames->prologs, &frames->prologs_capacity,
			    frames->prologs_size + 1 + size, 1) ||
	    ((frames->used + 1) * 2 > frames->capacity && !grow(frames)))
		return false;
	slot = slot_of(frames, start, time);
	if (slot->prolog) {
		if (slot->frame != &no_info)
			free(slot->frame);
	} else {
		frames->used++;
	}
	*slot = (struct slot){
	    .start = start, .time = time, .prolog = (uint32_t)frames->prologs_size + 1};
	frames->prologs[frames->prologs_size] = (uint8_t)(size | (whole ? WHOLE_CODE : 0));
	memcpy(frames->prologs + frames->prologs_size + 1, prolog, size);
	frames->prologs_size += 1 + size;
	return true;
}

/* Reads the unwind info of a slot's prolog: a frame, `no_info`, or NULL
 * when memory runs out. */
static struct jit_frame *read_prolog(const struct jit_frames *frames, const struct slot *slot)
{
	const uint8_t *kept = frames->prologs + slot->prolog - 1;
	size_t size = kept[0] & ~WHOLE_CODE;
	struct jit_frame *frame = malloc(sizeof(*frame));

	if (!frame)
		return NULL;
	if (!jit_prolog_unwind_info(kept + 1, size, frame->info, &frame->info_size, &frame->osr)) {
		free(frame);
		return &no_info;
	}
	/* Code that short is kept whole: its epilogs can be told. */
	frame->code_size = kept[0] & WHOLE_CODE ? size : 0;
	memcpy(frame->code, kept + 1, frame->code_size);
	return frame;
}

const struct jit_frame *jit_frames_find(struct jit_frames *frames, uint64_t start, uint64_t time)
{
	struct slot *slot;

	if (frames->capacity == 0)
		return NULL;
	slot = slot_of(frames, start, time);
	if (!slot->prolog)
		return NULL;
	if (!slot->frame)
		slot->frame = read_prolog(frames, slot);
	return slot->frame == &no_info ? NULL : slot->frame;
}
