#include "kernel_symbols_table.h"
#include "kernel_symbols.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

enum { COUNTS_SIZE = 16, ENTRY_SIZE = 16 };
/* A real core kernel's names take a few MB. */
#define MAX_NAMES_SIZE (256u << 20)

struct kernel_symbols_table {
	void *mapping;
	size_t mapping_size;
	const uint8_t *entries;
	const char *names;
	size_t count;
};

static bool is_text_type(char type)
{
	return type && strchr("tTwW", type);
}

bool kernel_symbols_table_write(FILE *out, const struct kernel_symbol_entry *entries, size_t count)
{
	uint64_t counts[2] = {count, 0};
	uint8_t entry[ENTRY_SIZE] = {0};

	for (size_t i = 0; i < count; i++) {
		if (!is_text_type(entries[i].type) ||
		    (i && entries[i].address <= entries[i - 1].address))
			return false;
		counts[1] += strlen(entries[i].name) + 1;
	}
	if (counts[1] > MAX_NAMES_SIZE || fwrite(counts, sizeof(counts), 1, out) != 1)
		return false;
	for (size_t i = 0, offset = 0; i < count; i++) {
		uint32_t name_offset = (uint32_t)offset;

		memcpy(entry, &entries[i].address, 8);
		memcpy(entry + 8, &name_offset, 4);
		entry[12] = (uint8_t)entries[i].type;
		if (fwrite(entry, sizeof(entry), 1, out) != 1)
			return false;
		offset += strlen(entries[i].name) + 1;
	}
	for (size_t i = 0; i < count; i++)
		if (fwrite(entries[i].name, strlen(entries[i].name) + 1, 1, out) != 1)
			return false;
	return !ferror(out);
}

static uint64_t address_at(const struct kernel_symbols_table *table, size_t position)
{
	uint64_t address;

	memcpy(&address, table->entries + position * ENTRY_SIZE, 8);
	return address;
}

/* Every entry sorted, nonzero, named inside the names, of a text type;
 * the names end in NUL. */
static bool is_valid(const struct kernel_symbols_table *table, uint64_t names_size)
{
	uint64_t previous = 0;

	if (table->count == 0 || names_size == 0 || table->names[names_size - 1] != '\0')
		return false;
	for (size_t i = 0; i < table->count; i++) {
		const uint8_t *entry = table->entries + i * ENTRY_SIZE;
		uint64_t address = address_at(table, i);
		uint32_t name_offset;

		memcpy(&name_offset, entry + 8, 4);
		if (address <= previous || name_offset >= names_size ||
		    !is_text_type((char)entry[12]))
			return false;
		previous = address;
	}
	return true;
}

struct kernel_symbols_table *kernel_symbols_table_map(int fd, size_t offset)
{
	struct kernel_symbols_table *table;
	uint64_t counts[2];
	struct stat status;
	void *mapping;

	if (fstat(fd, &status) < 0 || !S_ISREG(status.st_mode) ||
	    (uint64_t)status.st_size < offset + COUNTS_SIZE || status.st_size > (off_t)1 << 31)
		return NULL;
	mapping = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (mapping == MAP_FAILED)
		return NULL;
	memcpy(counts, (const uint8_t *)mapping + offset, sizeof(counts));
	table = calloc(1, sizeof(*table));
	if (table && counts[0] <= KERNEL_SYMBOLS_MAX_LINES && counts[1] <= MAX_NAMES_SIZE &&
	    offset + COUNTS_SIZE + counts[0] * ENTRY_SIZE + counts[1] == (uint64_t)status.st_size) {
		*table = (struct kernel_symbols_table){
		    .mapping = mapping,
		    .mapping_size = (size_t)status.st_size,
		    .entries = (const uint8_t *)mapping + offset + COUNTS_SIZE,
		    .names = (const char *)mapping + offset + COUNTS_SIZE + counts[0] * ENTRY_SIZE,
		    .count = counts[0]};
		if (is_valid(table, counts[1]))
			return table;
	}
	free(table);
	munmap(mapping, (size_t)status.st_size);
	return NULL;
}

void kernel_symbols_table_free(struct kernel_symbols_table *table)
{
	if (!table)
		return;
	munmap(table->mapping, table->mapping_size);
	free(table);
}

size_t kernel_symbols_table_count(const struct kernel_symbols_table *table)
{
	return table->count;
}

bool kernel_symbols_table_find(const struct kernel_symbols_table *table, uint64_t address,
			       size_t *position)
{
	size_t low = 0, high = table->count;

	if (address < address_at(table, 0) || address >= address_at(table, table->count - 1))
		return false;
	while (low < high) { /* the last entry starting at or below address */
		size_t middle = low + (high - low) / 2;

		if (address_at(table, middle) <= address)
			low = middle + 1;
		else
			high = middle;
	}
	*position = low - 1;
	return true;
}

struct kernel_symbol_entry kernel_symbols_table_entry(const struct kernel_symbols_table *table,
						      size_t position)
{
	const uint8_t *entry = table->entries + position * ENTRY_SIZE;
	uint32_t name_offset;

	memcpy(&name_offset, entry + 8, 4);
	return (struct kernel_symbol_entry){address_at(table, position), (char)entry[12],
					    table->names + name_offset};
}
