/* Debug files downloaded by build-id over HTTP(S) and kept in a local cache.
 *
 * Two key layouts are known:
 *   Microsoft's symbol server (and dotnet-symbol):
 *       URL/_.debug/elf-buildid-sym-<hex>/_.debug
 *   debuginfod:
 *       URL/buildid/<hex>/debuginfo
 * A server the user names is asked in both; DEBUGINFOD_URLS servers only in
 * the debuginfod one. The cache uses the first layout, so a cache folder is
 * also a valid symbol folder. A server that cannot be reached is not asked
 * again in the same run. */
#ifndef PROFCPU_SYMBOL_SERVER_H
#define PROFCPU_SYMBOL_SERVER_H

#include "build_id.h"

#include <stdio.h>

struct symbol_server;

/* `url` (may be NULL) is a server in either layout; `debuginfod_urls` (may be
 * NULL) is DEBUGINFOD_URLS: space-separated debuginfod servers. `cache_dir`
 * NULL means $XDG_CACHE_HOME/profcpu/symbols, else ~/.cache/profcpu/symbols.
 * Returns NULL (and says why on `log`) when there is no server to ask. */
struct symbol_server *symbol_server_new(const char *url, const char *debuginfod_urls,
					const char *cache_dir, FILE *log);
void symbol_server_free(struct symbol_server *server);

/* The cached path of the debug file with `id` (malloc'd), downloading it
 * when it is not cached yet; NULL when no server has it. `file_name` names
 * the binary in the log. */
char *symbol_server_fetch(struct symbol_server *server, const struct build_id *id,
			  const char *file_name);

/* Writes the cache path of `id` into `path`: where a download is stored and
 * where a symbol folder keeps it in the same layout. False when it does not
 * fit. */
bool symbol_server_key_path(const char *folder, const struct build_id *id, char *path, size_t size);

#endif
