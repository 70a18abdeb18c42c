/* Finds the separate debug file of a stripped ELF binary, in the order users
 * of gdb, perf and dotnet-symbol expect:
 *
 *   1. <dir>/<file>.dbg, <dir>/<file>.debug          (beside the binary)
 *   2. the .gnu_debuglink name in <dir>/, <dir>/.debug/, /usr/lib/debug/<dir>/
 *   3. /usr/lib/debug/.build-id/<xx>/<rest>.debug
 *   4. each symbol folder: flat (<folder>/<debuglink name>, <file>.dbg,
 *      <file>.debug, as dotnet-symbol --symbols -o writes it), a build-id tree
 *      (<folder>/.build-id/xx/rest.debug or <folder>/xx/rest.debug), or the
 *      symbol server key layout (symbol_server.h)
 *   5. the symbol server, when there is one
 *
 * Paths 1-3 are tried inside the target's root, then in the profiler's own
 * file system (where the user may have mounted symbols). A candidate is taken
 * only when its build-id equals the binary's, or, for a binary without a
 * build-id, when its CRC-32 equals the debuglink's; refusals are logged. */
#ifndef PROFCPU_DEBUG_FILE_SEARCH_H
#define PROFCPU_DEBUG_FILE_SEARCH_H

#include "elf_file.h"
#include "symbol_server.h"

#include <stdio.h>

struct debug_search {
	int target_root_fd;		/* -1: the target sees our file system */
	const char *const *symbol_dirs; /* NULL-terminated; may be NULL */
	struct symbol_server *server;	/* NULL: no downloads */
	FILE *log;
};

/* Returns the debug file of `binary`, which was opened from `path` (as the
 * target sees it), with a .symtab; NULL when none is found. `where` receives
 * a description of the file found, for the log. */
struct elf_file *debug_file_find(const struct debug_search *search, const char *path,
				 const struct elf_file *binary, char *where, size_t where_size);

#endif
