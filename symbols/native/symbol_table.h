/* Named code ranges of one module (an ELF file, or the kernel), sorted by
 * start address for binary search. Names are demangled on first lookup and
 * kept, so each name is demangled at most once. */
#ifndef PROFCPU_SYMBOL_TABLE_H
#define PROFCPU_SYMBOL_TABLE_H

#include "demangle.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When two symbols start at the same address the higher rank names it
 * (a global function over a local alias over an untyped label). */
enum symbol_rank {
	SYMBOL_RANK_LABEL,
	SYMBOL_RANK_LOCAL,
	SYMBOL_RANK_WEAK,
	SYMBOL_RANK_GLOBAL,
};

struct symbol_table;

struct symbol_table *symbol_table_new(void);
void symbol_table_free(struct symbol_table *table);

/* Adds a symbol (the name is copied). `size` 0 means unknown: the symbol
 * then covers the addresses up to the next symbol. Returns false when out of
 * memory. */
bool symbol_table_add(struct symbol_table *table, const char *name, uint64_t start, uint64_t size,
		      enum symbol_rank rank);

/* How the names are mangled: MANGLING_NATIVE unless set. */
void symbol_table_set_mangling(struct symbol_table *table, enum mangling mangling);

/* Sorts and removes duplicates; call once after the last add. */
void symbol_table_finish(struct symbol_table *table);

size_t symbol_table_count(const struct symbol_table *table);

/* Finds the symbol covering `address`: demangled name (owned by the table)
 * and the address' offset from the symbol's start. */
bool symbol_table_find(struct symbol_table *table, uint64_t address, const char **name,
		       uint64_t *offset);

#endif
