/* The portable PDB of a .NET assembly, as the target holds it: embedded in
 * the assembly (its debug directory's Embedded Portable PDB entry, a
 * deflated copy), or the file beside it named as the assembly with ".pdb"
 * for ".dll", taken only when its id is the one the assembly's CodeView
 * entry names (a PDB of another build would give wrong lines).
 * A single-file app's assembly is read from inside the app (inflated when
 * compressed), where the runtime's path for it (in the app's folder) holds
 * no file (bundle_find_storing), or named EXECUTABLE/NAME (the capture's
 * name for the copy of a compressed one, bundle_read_inner); its PDB is
 * embedded or beside the app (the SDK refuses to store PDBs in the app for
 * .NET 5 and later: NETSDK1142).
 *
 * Both files are the target's: opened inside its root (target_file.h), a
 * .pdb of at most ASSEMBLY_PDB_MAX_SIZE bytes, read within a time limit,
 * and an embedded one inflated to at most that size. */
#ifndef PROFCPU_ASSEMBLY_PDB_H
#define PROFCPU_ASSEMBLY_PDB_H

#include "portable_pdb.h"

#include <stddef.h>

#define ASSEMBLY_PDB_MAX_SIZE (64u << 20)

/* The portable PDB of the assembly at `path` (as the target sees it) inside
 * `root_fd` (target_root.h; -1: the profiler's own files). NULL, with the
 * reason in `why` (the assembly cannot be read, it names no PDB, the PDB is
 * missing, of another build or damaged), when there is none to read. */
struct portable_pdb *assembly_pdb_open(int root_fd, const char *path, char *why, size_t why_size);

#endif
