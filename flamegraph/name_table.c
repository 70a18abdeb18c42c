#include "name_table.h"
#include "allocation.h"

#include <stdlib.h>
#include <string.h>

enum { FIRST_CHUNK_SIZE = 64 * 1024, FIRST_SLOT_COUNT = 1024 };

/* 64-bit multiply-fold hash over 8-byte words; quality is plenty for a hash
 * table and it runs near memory speed on long .NET names. */
uint64_t hash_bytes(const void *data, size_t length)
{
	const unsigned char *bytes = data;
	uint64_t hash = 0x9E3779B97F4A7C15ull ^ (length * 0xFF51AFD7ED558CCDull);
	uint64_t word;

	for (; length >= 8; bytes += 8, length -= 8) {
		memcpy(&word, bytes, 8);
		hash = (hash ^ word) * 0xBF58476D1CE4E5B9ull;
		hash ^= hash >> 31;
	}
	word = 0;
	memcpy(&word, bytes, length);
	hash = (hash ^ word) * 0x94D049BB133111EBull;
	hash ^= hash >> 29;
	hash *= 0xBF58476D1CE4E5B9ull;
	return hash ^ (hash >> 32);
}

void name_table_init(struct name_table *table)
{
	*table = (struct name_table){0};
	table->slot_count = FIRST_SLOT_COUNT;
	table->slots = fg_calloc(table->slot_count, sizeof(*table->slots));
}

void name_table_free(struct name_table *table)
{
	for (size_t i = 0; i < table->chunk_count; i++)
		free(table->chunks[i]);
	free(table->chunks);
	free(table->names);
	free(table->lengths);
	free(table->slots);
	*table = (struct name_table){0};
}

static char *store(struct name_table *table, const char *name, size_t length)
{
	char *copy;

	if (!table->chunk_count || table->chunk_used + length + 1 > table->chunk_size) {
		size_t size = FIRST_CHUNK_SIZE << (table->chunk_count < 8 ? table->chunk_count : 8);

		if (size < length + 1)
			size = length + 1;
		fg_grow((void **)&table->chunks, &table->chunk_capacity, table->chunk_count + 1,
			sizeof(*table->chunks));
		table->chunks[table->chunk_count++] = fg_malloc(size);
		table->chunk_size = size;
		table->chunk_used = 0;
	}
	copy = table->chunks[table->chunk_count - 1] + table->chunk_used;
	memcpy(copy, name, length);
	copy[length] = '\0';
	table->chunk_used += length + 1;
	return copy;
}

static void rehash(struct name_table *table)
{
	size_t new_count = table->slot_count * 2;
	struct name_slot *slots = fg_calloc(new_count, sizeof(*slots));

	for (size_t i = 0; i < table->slot_count; i++) {
		size_t slot;

		if (!table->slots[i].id_plus_one)
			continue;
		slot = table->slots[i].hash & (new_count - 1);
		while (slots[slot].id_plus_one)
			slot = (slot + 1) & (new_count - 1);
		slots[slot] = table->slots[i];
	}
	free(table->slots);
	table->slots = slots;
	table->slot_count = new_count;
}

uint32_t name_table_intern(struct name_table *table, const char *name, size_t length)
{
	uint64_t hash = hash_bytes(name, length);
	size_t mask = table->slot_count - 1;
	size_t slot = hash & mask;
	uint32_t id;

	for (; table->slots[slot].id_plus_one; slot = (slot + 1) & mask) {
		const struct name_slot *candidate = &table->slots[slot];

		id = candidate->id_plus_one - 1;
		if (candidate->hash == hash && candidate->length == length &&
		    !memcmp(table->names[id], name, length))
			return id;
	}
	id = (uint32_t)table->count;
	if (table->count == table->capacity) {
		fg_grow((void **)&table->names, &table->capacity, table->count + 1,
			sizeof(*table->names));
		table->lengths =
		    fg_realloc(table->lengths, table->capacity * sizeof(*table->lengths));
	}
	table->names[id] = store(table, name, length);
	table->lengths[id] = (uint32_t)length;
	table->count++;
	table->slots[slot] =
	    (struct name_slot){.hash = hash, .id_plus_one = id + 1, .length = (uint32_t)length};
	if (table->count * 2 > table->slot_count)
		rehash(table);
	return id;
}
