/* Source lines of addresses, from the DWARF line table (.debug_line) of a
 * module, read by line_programs.h: only .debug_line and the names it points
 * to are read and inflated, not the units of .debug_info. */
#ifndef PROFCPU_LINE_TABLE_H
#define PROFCPU_LINE_TABLE_H

#include "elf_file.h"
#include "source_line.h"

#include <stdbool.h>
#include <stdint.h>

struct line_table;

/* Indexes the line table of `file`, which must outlive the result. NULL
 * when it has none that covers any address. */
struct line_table *line_table_open(struct elf_file *file);
void line_table_free(struct line_table *table);

/* The line `address` (a virtual address of the file) was compiled from.
 * The file name is owned by `table`. A table of DWARF 4 and older does not
 * name the compilation folder a relative name is relative to: then
 * `*relative_to_unit` is set (dwarf_units_source_path joins it). False when
 * no row holds the address, or the row says line 0 (code no line
 * produced). */
bool line_table_find(struct line_table *table, uint64_t address, struct source_line *line,
		     bool *relative_to_unit);

#endif
