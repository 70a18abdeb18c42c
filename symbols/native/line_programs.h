/* The line programs of a .debug_line section (DWARF 2 to 5), read without
 * .debug_info: each program's sequences are run once for their address
 * ranges only, and a lookup runs again just the sequence holding the
 * address. Libc's debug file from Debian compresses 5.8 MB of .debug_info
 * beside 1.3 MB of .debug_line; finding the unit of an address through
 * .debug_info, as libdw does, meant inflating it all (docs/BENCHMARKS.md).
 *
 * The bytes are the target's (hostile): every read is bounded by its
 * section, every sequence by its program, the index by MAX_SEQUENCES. */
#ifndef PROFCPU_LINE_PROGRAMS_H
#define PROFCPU_LINE_PROGRAMS_H

#include "source_line.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sections of one little-endian file, inflated; sections but .debug_line
 * may be missing (NULL, size 0). */
struct line_sections {
	const uint8_t *line;	 /* .debug_line */
	const uint8_t *line_str; /* .debug_line_str: DW_FORM_line_strp names */
	const uint8_t *str;	 /* .debug_str: DW_FORM_strp names */
	size_t line_size, line_str_size, str_size;
};

struct line_programs;

/* Indexes the sequences of every line program in `sections`, whose bytes
 * must outlive the result. NULL when no sequence covers any address. A
 * damaged program ends the index there; those before it are kept. */
struct line_programs *line_programs_index(const struct line_sections *sections);
void line_programs_free(struct line_programs *programs);

/* The row of the line table holding `address`, as libdw's dwarf_getsrc_die
 * picks it: in the sequence whose range holds the address, the last row at
 * or before it. The file is the row's file joined to its directory, and an
 * absolute path when the program says enough: a DWARF 5 program names the
 * compilation folder (its directory 0); an older program leaves a name
 * relative to that folder, which is in .debug_info (the unit's
 * DW_AT_comp_dir), relative, and sets `*relative_to_unit`. File names are
 * owned by `programs`. False when no sequence holds the address, or its row
 * says line 0 or names no file. */
bool line_programs_find(struct line_programs *programs, uint64_t address, struct source_line *line,
			bool *relative_to_unit);

#endif
