/* Dense ids for keys of two 64-bit words (an interned name's address, a
 * pair of them, a stack and a thread): the first key added gets id 0, the
 * next new one 1, and so on. Folding adds up samples by (stack, group)
 * with it; the outputs that number their own tables (pprof's functions,
 * speedscope's frames) build them with it. */
#ifndef PROFCPU_ID_MAP_H
#define PROFCPU_ID_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct id_map_entry {
	uint64_t first, second;
};

struct id_map {
	struct id_map_entry *keys; /* by id */
	size_t count, capacity;
	uint32_t *slots; /* open addressing over ids; UINT32_MAX is empty */
	size_t slot_count;
};

/* The id of (first, second), added if new; `*added` (may be NULL) says
 * whether it was. */
uint32_t id_map_get(struct id_map *map, uint64_t first, uint64_t second, bool *added);

void id_map_release(struct id_map *map);

#endif
