/* A portable PDB (the Portable PDB v1.0 format, what the .NET SDK writes by
 * default): the source line of each IL offset of a method, from the
 * sequence points of its MethodDebugInformation row, and the name of the
 * document they are in.
 *
 * The bytes come from the target (a .pdb beside its assembly, or the one
 * embedded in it): every index and blob is checked, a malformed sequence
 * point blob gives no line, and a lookup reads one method's blob. */
#ifndef PROFCPU_PORTABLE_PDB_H
#define PROFCPU_PORTABLE_PDB_H

#include "source_line.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PORTABLE_PDB_ID_SIZE 20 /* the GUID and stamp an assembly's CodeView entry names */

/* A source line no sequence point may have: the compiler's mark of a hidden
 * point (code no line of the source holds). */
#define PORTABLE_PDB_HIDDEN_LINE 0xfeefee

struct portable_pdb;

/* Reads the PDB in the `size` bytes at `data`, which it takes (free()d with
 * the PDB, or at once on failure). NULL, with a reason in `why`, when it is
 * not a portable PDB (a Windows PDB, "Microsoft C/C++ MSF 7.00", is
 * named as such). */
struct portable_pdb *portable_pdb_parse(uint8_t *data, size_t size, char *why, size_t why_size);

void portable_pdb_free(struct portable_pdb *pdb);

/* The PDB's id, which the assembly built with it names. */
void portable_pdb_id(const struct portable_pdb *pdb, uint8_t id[PORTABLE_PDB_ID_SIZE]);

/* The line holding IL offset `il_offset` of the method whose MethodDef
 * token is `method_token`: the last sequence point at or before the offset.
 * False when the method has none there, or that one is hidden. The file
 * name stays valid until portable_pdb_free(). */
bool portable_pdb_line(struct portable_pdb *pdb, uint32_t method_token, uint32_t il_offset,
		       struct source_line *line);

#endif
