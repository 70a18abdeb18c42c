/* Source lines of addresses, from the DWARF line table (.debug_line) of a
 * module. */
#ifndef PROFCPU_LINE_TABLE_H
#define PROFCPU_LINE_TABLE_H

#include "dwarf_units.h"
#include "native_frame.h"

#include <stdbool.h>
#include <stdint.h>

/* The line `address` (a virtual address of the file) was compiled from.
 * The unit's table is parsed on its first lookup and kept by libdw; the file
 * name is owned by `units`. False when no row holds the address, or the row
 * says line 0 (code no line produced). */
bool line_table_find(struct dwarf_units *units, uint64_t address, struct source_line *line);

#endif
