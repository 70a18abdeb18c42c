#include "string_table.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Strings live in large blocks, so interning costs no malloc per string. */
struct block {
	struct block *next;
	size_t used, size;
	char bytes[];
};

struct string_table {
	const char **slots; /* open addressing; NULL is empty */
	size_t slot_count, used;
	struct block *blocks;
};

static uint64_t hash_string(const char *string)
{
	uint64_t hash = 1469598103934665603ull; /* FNV-1a */

	for (; *string; string++)
		hash = (hash ^ (unsigned char)*string) * 1099511628211ull;
	return hash;
}

struct string_table *string_table_new(void)
{
	struct string_table *table = xcalloc(1, sizeof(*table));

	table->slot_count = 1024;
	table->slots = xcalloc(table->slot_count, sizeof(*table->slots));
	return table;
}

void string_table_free(struct string_table *table)
{
	if (!table)
		return;
	while (table->blocks) {
		struct block *next = table->blocks->next;

		free(table->blocks);
		table->blocks = next;
	}
	free(table->slots);
	free(table);
}

static char *store(struct string_table *table, const char *string)
{
	size_t length = strlen(string) + 1;
	struct block *block = table->blocks;

	if (!block || block->size - block->used < length) {
		size_t size = length > 65536 ? length : 65536;

		block = xmalloc(sizeof(*block) + size);
		block->next = table->blocks;
		block->used = 0;
		block->size = size;
		table->blocks = block;
	}
	memcpy(block->bytes + block->used, string, length);
	block->used += length;
	return block->bytes + block->used - length;
}

static void rehash(struct string_table *table)
{
	size_t old_count = table->slot_count;
	const char **old_slots = table->slots;

	table->slot_count *= 2;
	table->slots = xcalloc(table->slot_count, sizeof(*table->slots));
	for (size_t i = 0; i < old_count; i++) {
		size_t slot;

		if (!old_slots[i])
			continue;
		slot = hash_string(old_slots[i]) & (table->slot_count - 1);
		while (table->slots[slot])
			slot = (slot + 1) & (table->slot_count - 1);
		table->slots[slot] = old_slots[i];
	}
	free(old_slots);
}

const char *string_table_intern(struct string_table *table, const char *string)
{
	size_t slot;

	if (table->used * 2 >= table->slot_count)
		rehash(table);
	slot = hash_string(string) & (table->slot_count - 1);
	while (table->slots[slot]) {
		if (!strcmp(table->slots[slot], string))
			return table->slots[slot];
		slot = (slot + 1) & (table->slot_count - 1);
	}
	table->used++;
	return table->slots[slot] = store(table, string);
}
