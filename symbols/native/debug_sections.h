/* A debug file's DWARF sections made ready for libdw, which on opening a
 * file inflates every compressed .debug_* section it knows with zlib, read
 * or not: Debian's debug packages (libc6-dbg) compress them all, and that
 * was all of the cost of source lines (docs/BENCHMARKS.md). Here the
 * sections that inlined frames read through libdw are inflated with ISA-L's
 * igzip instead (twice zlib's speed on libc's), and those they never read
 * (location lists, address lookup tables, macros, name indexes) are hidden
 * from libdw, which then neither inflates nor keeps them. Source lines read
 * their few sections one by one (debug_section_read), without libdw. */
#ifndef PROFCPU_DEBUG_SECTIONS_H
#define PROFCPU_DEBUG_SECTIONS_H

#include <gelf.h>
#include <stdint.h>

struct debug_sections;

/* Prepares the sections of `elf` (its headers and data, in memory only: the
 * file is not written) before dwarf_begin_elf(). The inflated sections live
 * in the returned value, to be freed after dwarf_end(); NULL when nothing
 * was inflated (a section that does not inflate is left to libdw, which
 * refuses it as before). */
struct debug_sections *debug_sections_prepare(Elf *elf);
void debug_sections_free(struct debug_sections *sections);

/* The bytes of the section `name` (".debug_line") of `elf`, inflated when
 * compressed (`SHF_COMPRESSED` with igzip, or the GNU `.zdebug_line` form
 * with libelf): NULL when there is none or it does not inflate. `*owned`
 * is the buffer to free when done, NULL when the bytes are libelf's (they
 * live as long as `elf`). */
const uint8_t *debug_section_read(Elf *elf, const char *name, size_t *size, void **owned);

#endif
