/* The core kernel's text symbols as a compact table in a file: what the
 * boot's copy of kallsyms holds (kernel_symbols_boot_cache.h), so that a
 * capture maps it and looks addresses up at once instead of parsing 100,000
 * and more text lines.
 *
 * Layout, after whatever header the file's owner puts before it (host byte
 * order: the copy never leaves the machine that wrote it):
 *
 *     u64 count, u64 names_size
 *     count entries of 16 bytes: u64 address, u32 name_offset, u8 type, 3 zero bytes
 *     names_size bytes: the names, each ending in NUL
 *
 * sorted by address, one entry per address. The file is on disk and may be
 * anything: mapping checks every entry (sorted, named inside the names, a
 * text type) and the sizes before the table is used. */
#ifndef PROFCPU_KERNEL_SYMBOLS_TABLE_H
#define PROFCPU_KERNEL_SYMBOLS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kernel_symbol_entry {
	uint64_t address;
	char type; /* t, T, w or W */
	const char *name;
};

/* Writes `count` entries, sorted by address, one per address, as the
 * table. False when a write fails or the entries are not so. */
bool kernel_symbols_table_write(FILE *out, const struct kernel_symbol_entry *entries, size_t count);

struct kernel_symbols_table;

/* Maps the table that fills the regular file `fd` from `offset` to its
 * end. NULL when it is not a whole, valid table. `fd` may be closed after. */
struct kernel_symbols_table *kernel_symbols_table_map(int fd, size_t offset);

void kernel_symbols_table_free(struct kernel_symbols_table *table);

size_t kernel_symbols_table_count(const struct kernel_symbols_table *table);

/* The entry that names `address` (the last starting at or below it) when
 * it lies from the table's first address up to, not including, its last
 * (where the last symbol ends is unknown): its position. False for an
 * address outside them, which the table says nothing of. */
bool kernel_symbols_table_find(const struct kernel_symbols_table *table, uint64_t address,
			       size_t *position);

/* The entry at `position` (below the count); its name stays valid until
 * the table is freed. */
struct kernel_symbol_entry kernel_symbols_table_entry(const struct kernel_symbols_table *table,
						      size_t position);

#endif
