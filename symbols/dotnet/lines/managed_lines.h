/* The source lines of .NET JIT code: each piece of code the runtime
 * described (its start, size, method token and assembly) with the JIT's map
 * of native offsets to IL offsets, and the assembly's portable PDB, which
 * maps IL offsets to lines (assembly_pdb.h). Precompiled (ReadyToRun) code
 * brings its own IL offsets (managed_images_il_offset()) and asks for their
 * lines by assembly.
 *
 * The maps come from the runtime's events (the IL-to-native map of each
 * piece of code, every tier of a method at its own address); each
 * assembly's PDB is read on the first lookup that hits its code, and an
 * assembly without one is said once in the log, with the reason. */
#ifndef PROFCPU_MANAGED_LINES_H
#define PROFCPU_MANAGED_LINES_H

#include "source_line.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The JIT's IL offsets for code that no IL offset holds. */
#define MANAGED_IL_NO_MAPPING 0xffffffffu
#define MANAGED_IL_PROLOG     0xfffffffeu
#define MANAGED_IL_EPILOG     0xfffffffdu

/* From native offset `native_offset` on, the code is that of `il_offset`. */
struct managed_line_map_entry {
	uint32_t native_offset, il_offset;
};

/* The IL offset that map entry `entry` gives its code: the prolog counts as
 * the method's start; the epilog and code no IL holds have none (false). */
bool managed_il_offset_of(const struct managed_line_map_entry *entry, uint32_t *il_offset);

struct managed_lines;

struct managed_lines *managed_lines_new(void);
void managed_lines_free(struct managed_lines *lines);

/* Adds the code at [start, start + size) of the method whose MethodDef
 * token is `method_token` in the assembly at `assembly_path` (as the target
 * sees it), with its map (`count` entries, in any order). A later piece of
 * code at the same start replaces it. False, adding nothing, for an empty
 * range or map, or when memory or a bound runs out. */
bool managed_lines_add_code(struct managed_lines *lines, uint64_t start, uint32_t size,
			    const char *assembly_path, uint32_t method_token,
			    const struct managed_line_map_entry *map, size_t count);

size_t managed_lines_code_count(const struct managed_lines *lines);

/* Where lookups read the assemblies and their PDBs: inside `root_fd`
 * (target_root.h; -1: the profiler's own files, the default), which must
 * stay open until managed_lines_free(); `log` (may be NULL) hears once of
 * each assembly that gives no lines. */
void managed_lines_read_files_in(struct managed_lines *lines, int root_fd, FILE *log);

/* The source line of the JIT code at `address` (for a caller's frame, the
 * address of its call). False when no map covers it, the map gives no IL
 * offset there, or the assembly has no PDB that names a line for it. The
 * file name stays valid until managed_lines_free(). */
bool managed_lines_lookup(struct managed_lines *lines, uint64_t address, struct source_line *line);

/* The line of a caller's frame whose call, returning to `return_address`,
 * the JIT maps to no IL offset (a call of the runtime's: the transition to
 * on-stack-replaced code that a quick-JIT frame waits in below it): that of
 * the code it returns to (the loop head where the replacement entered).
 * False for any other call, or when no map covers it. */
bool managed_lines_lookup_return(struct managed_lines *lines, uint64_t return_address,
				 struct source_line *line);

/* Whether the assembly at `assembly_path` has a PDB to read lines from
 * (read on the first call; the log hears once why not). */
bool managed_lines_has_pdb(struct managed_lines *lines, const char *assembly_path);

/* The source line of IL offset `il_offset` of the method `method_token` of
 * the assembly at `assembly_path`, from its PDB; false when it has none or
 * the PDB names no line there. */
bool managed_lines_lookup_il(struct managed_lines *lines, const char *assembly_path,
			     uint32_t method_token, uint32_t il_offset, struct source_line *line);

#endif
