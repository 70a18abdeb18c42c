#include "symbol_table.h"
#include "buffer.h"

#include <stdlib.h>
#include <string.h>

struct symbol {
	uint64_t start, size;
	size_t name_offset; /* into `names`, which moves as it grows */
	char *demangled;    /* NULL until looked up; then the name to show */
	enum symbol_rank rank;
};

struct symbol_table {
	struct symbol *symbols;
	size_t count, capacity;
	char *names;
	size_t names_length, names_capacity;
	enum mangling mangling;
};

struct symbol_table *symbol_table_new(void)
{
	return calloc(1, sizeof(struct symbol_table));
}

void symbol_table_free(struct symbol_table *table)
{
	if (!table)
		return;
	for (size_t i = 0; i < table->count; i++)
		if (table->symbols[i].demangled != table->names + table->symbols[i].name_offset)
			free(table->symbols[i].demangled);
	free(table->symbols);
	free(table->names);
	free(table);
}

bool symbol_table_add(struct symbol_table *table, const char *name, uint64_t start, uint64_t size,
		      enum symbol_rank rank)
{
	size_t length = strlen(name) + 1;

	if (!buffer_reserve((void **)&table->names, &table->names_capacity,
			    table->names_length + length, 1) ||
	    !buffer_reserve((void **)&table->symbols, &table->capacity, table->count + 1,
			    sizeof(struct symbol)))
		return false;
	memcpy(table->names + table->names_length, name, length);
	table->symbols[table->count++] = (struct symbol){
	    .start = start,
	    .size = start + size < start ? UINT64_MAX - start : size,
	    .name_offset = table->names_length,
	    .rank = rank,
	};
	table->names_length += length;
	return true;
}

void symbol_table_set_mangling(struct symbol_table *table, enum mangling mangling)
{
	table->mangling = mangling;
}

/* By start; for one start the best first: higher rank, then a known size. */
static int compare_symbols(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return x->size != 0 ? -1 : 1;
	return (x->name_offset > y->name_offset) - (x->name_offset < y->name_offset);
}

void symbol_table_finish(struct symbol_table *table)
{
	size_t unique = 0;

	if (table->count == 0)
		return;
	qsort(table->symbols, table->count, sizeof(struct symbol), compare_symbols);
	for (size_t i = 0; i < table->count; i++)
		if (unique == 0 || table->symbols[unique - 1].start != table->symbols[i].start)
			table->symbols[unique++] = table->symbols[i];
	table->count = unique;
}

size_t symbol_table_count(const struct symbol_table *table)
{
	return table->count;
}

static const char *display_name(struct symbol_table *table, struct symbol *symbol)
{
	if (!symbol->demangled) {
		char *raw = table->names + symbol->name_offset;

		symbol->demangled = demangle(raw, table->mangling);
		if (!symbol->demangled)
			symbol->demangled = raw;
	}
	return symbol->demangled;
}

bool symbol_table_find(struct symbol_table *table, uint64_t address, const char **name,
		       uint64_t *offset)
{
	size_t low = 0, high = table->count;
	struct symbol *symbol;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (table->symbols[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return false;
	symbol = &table->symbols[low - 1];
	/* A sized symbol covers exactly its size: past it lies code no symbol
	 * names (a stripped internal function), not more of this one. */
	if (symbol->size != 0 && address - symbol->start >= symbol->size)
		return false;
	if (symbol->size == 0 && low == table->count && address != symbol->start)
		return false;
	*name = display_name(table, symbol);
	*offset = address - symbol->start;
	return true;
}
