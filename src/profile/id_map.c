#include "id_map.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY_SLOT UINT32_MAX

static size_t slot_of(const struct id_map *map, uint64_t first, uint64_t second)
{
	uint64_t hash = (first * 0x9e3779b97f4a7c15ull) ^ (second + 0x632be59bd9b4e019ull);

	hash ^= hash >> 29;
	hash *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(hash ^ (hash >> 32)) & (map->slot_count - 1);
}

/* Rebuilt twice as large when half full, so probes stay short. */
static void grow_slots(struct id_map *map)
{
	free(map->slots);
	map->slot_count = map->slot_count ? map->slot_count * 2 : 1024;
	map->slots = xmalloc(map->slot_count * sizeof(*map->slots));
	memset(map->slots, 0xff, map->slot_count * sizeof(*map->slots));
	for (uint32_t id = 0; id < map->count; id++) {
		size_t slot = slot_of(map, map->keys[id].first, map->keys[id].second);

		while (map->slots[slot] != EMPTY_SLOT)
			slot = (slot + 1) & (map->slot_count - 1);
		map->slots[slot] = id;
	}
}

uint32_t id_map_get(struct id_map *map, uint64_t first, uint64_t second, bool *added)
{
	size_t slot;

	if ((map->count + 1) * 2 > map->slot_count)
		grow_slots(map);
	for (slot = slot_of(map, first, second); map->slots[slot] != EMPTY_SLOT;
	     slot = (slot + 1) & (map->slot_count - 1)) {
		const struct id_map_entry *key = &map->keys[map->slots[slot]];

		if (key->first == first && key->second == second) {
			if (added)
				*added = false;
			return map->slots[slot];
		}
	}
	grow_array((void **)&map->keys, &map->capacity, map->count + 1, sizeof(*map->keys));
	map->keys[map->count] = (struct id_map_entry){first, second};
	map->slots[slot] = (uint32_t)map->count;
	if (added)
		*added = true;
	return (uint32_t)map->count++;
}

void id_map_release(struct id_map *map)
{
	free(map->keys);
	free(map->slots);
	*map = (struct id_map){0};
}
