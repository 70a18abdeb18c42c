/* Interned frame names: each distinct name is stored once and known by a
 * small number, so the frame tree compares and hashes numbers. */
#ifndef PROFCPU_NAME_TABLE_H
#define PROFCPU_NAME_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Hash and length live in the slot, so a lookup reads the name's bytes only
 * when they are likely equal. */
struct name_slot {
	uint64_t hash;
	uint32_t id_plus_one; /* 0: empty */
	uint32_t length;
};

struct name_table {
	char **chunks; /* names, NUL-terminated, packed into big blocks */
	size_t chunk_count, chunk_capacity, chunk_used, chunk_size;
	const char **names;	 /* id -> name */
	uint32_t *lengths;	 /* id -> strlen(name) */
	size_t count, capacity;	 /* ids in use, capacity of names and lengths */
	struct name_slot *slots; /* open-addressing hash table */
	size_t slot_count;	 /* a power of two */
};

void name_table_init(struct name_table *table);
void name_table_free(struct name_table *table);

/* The id of `name[0..length)`, adding it if new. */
uint32_t name_table_intern(struct name_table *table, const char *name, size_t length);

static inline const char *name_table_name(const struct name_table *table, uint32_t id)
{
	return table->names[id];
}

static inline size_t name_table_length(const struct name_table *table, uint32_t id)
{
	return table->lengths[id];
}

/* A fast 64-bit hash of bytes (also used by the palette, so a name's colour
 * never changes between runs). */
uint64_t hash_bytes(const void *data, size_t length);

#endif
