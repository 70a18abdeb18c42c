/* The DWARF (.debug_info, .debug_line) of one ELF file, with an index of its
 * compilation units by address: what inlined frames and source lines are
 * read from. */
#ifndef PROFCPU_DWARF_UNITS_H
#define PROFCPU_DWARF_UNITS_H

#include "elf_file.h"

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

struct dwarf_units;

/* Reads DWARF from `file`, which must outlive the result. NULL when it has
 * no usable DWARF. */
struct dwarf_units *dwarf_units_open(struct elf_file *file);
void dwarf_units_free(struct dwarf_units *units);

/* The compilation unit whose address ranges hold `address`. The index is
 * built on the first call. */
bool dwarf_units_find(struct dwarf_units *units, uint64_t address, Dwarf_Die *unit);

/* `file`, a source file name of `unit`'s tables (libdw's or line_table.h's,
 * living as long as `units`), as an absolute path: a relative name (a build that passed relative
 * paths to the compiler, as meson does) joined to the unit's compilation folder. The joined names
 * are owned by `units`. */
const char *dwarf_units_source_path(struct dwarf_units *units, Dwarf_Die *unit, const char *file);

#endif
