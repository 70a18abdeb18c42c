#include "code_cache.h"

#include <stdlib.h>

/* Direct-mapped: a new answer takes the slot of an older one. A stack
 * walk meets a few thousand distinct addresses at most. */
#define CODE_CACHE_SLOTS 8192

struct code_cache_slot {
	uint64_t address;
	uint32_t pid;
	uint32_t generation; /* the slot holds an answer of this generation */
	struct code_at code;
};

struct code_cache {
	uint32_t generation; /* from 1; slots of other generations are empty */
	struct code_cache_slot slots[CODE_CACHE_SLOTS];
};

struct code_cache *code_cache_new(void)
{
	struct code_cache *cache = calloc(1, sizeof(*cache));

	if (cache)
		cache->generation = 1;
	return cache;
}

void code_cache_free(struct code_cache *cache)
{
	free(cache);
}

void code_cache_forget(struct code_cache *cache)
{
	/* After 2^32 changes the numbers would come round: empty every slot. */
	if (++cache->generation == 0) {
		for (size_t i = 0; i < CODE_CACHE_SLOTS; i++)
			cache->slots[i].generation = 0;
		cache->generation = 1;
	}
}

static size_t slot_of(pid_t pid, uint64_t address)
{
	return (size_t)(((address ^ (uint64_t)(uint32_t)pid << 40) * 0x9e3779b97f4a7c15ull) >> 51);
}

bool code_cache_find(const struct code_cache *cache, pid_t pid, uint64_t address,
		     struct code_at *code)
{
	const struct code_cache_slot *slot = &cache->slots[slot_of(pid, address)];

	if (slot->generation != cache->generation || slot->address != address ||
	    slot->pid != (uint32_t)pid)
		return false;
	*code = slot->code;
	return true;
}

void code_cache_keep(struct code_cache *cache, pid_t pid, uint64_t address,
		     const struct code_at *code)
{
	cache->slots[slot_of(pid, address)] =
	    (struct code_cache_slot){address, (uint32_t)pid, cache->generation, *code};
}
