#include "code_cache.h"

#include <stdlib.h>

/* Direct-mapped: a new answer takes the slot of an older one. A stack
 * walk meets a few thousand distinct addresses at most. */
#define CODE_CACHE_SLOTS 8192

struct code_cache_slot {
	uint64_t address;
	uint64_t generation; /* 0: empty; 64 bits never come round */
	struct code_at code;
};

struct code_cache {
	uint64_t last_generation;
	struct code_cache_slot slots[CODE_CACHE_SLOTS];
};

struct code_cache *code_cache_new(void)
{
	return calloc(1, sizeof(struct code_cache));
}

void code_cache_free(struct code_cache *cache)
{
	free(cache);
}

uint64_t code_cache_new_generation(struct code_cache *cache)
{
	return ++cache->last_generation;
}

static size_t slot_of(uint64_t generation, uint64_t address)
{
	return (size_t)(((address ^ generation << 40) * 0x9e3779b97f4a7c15ull) >> 51);
}

bool code_cache_find(const struct code_cache *cache, uint64_t generation, uint64_t address,
		     struct code_at *code)
{
	const struct code_cache_slot *slot = &cache->slots[slot_of(generation, address)];

	if (slot->generation != generation || slot->address != address)
		return false;
	*code = slot->code;
	return true;
}

void code_cache_keep(struct code_cache *cache, uint64_t generation, uint64_t address,
		     const struct code_at *code)
{
	cache->slots[slot_of(generation, address)] =
	    (struct code_cache_slot){address, generation, *code};
}
