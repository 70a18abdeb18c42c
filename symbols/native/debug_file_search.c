#include "debug_file_search.h"

#include "symbols_log.h"
#include "target_file.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One search: the binary's identity, and the candidates already tried (the
 * debuglink name is often <file>.dbg, found again at step 2). */
struct search_state {
	const struct debug_search *search;
	const struct elf_file *binary;
	const char *binary_path;
	char hex[BUILD_ID_HEX_MAX];
	char **tried;
	size_t tried_count;
};

static bool already_tried(struct search_state *state, const char *key)
{
	char **grown;

	for (size_t i = 0; i < state->tried_count; i++)
		if (strcmp(state->tried[i], key) == 0)
			return true;
	grown = realloc(state->tried, (state->tried_count + 1) * sizeof(*grown));
	if (!grown)
		return true;
	state->tried = grown;
	state->tried[state->tried_count] = strdup(key);
	if (state->tried[state->tried_count])
		state->tried_count++;
	return false;
}

static bool identity_matches(struct search_state *state, const struct elf_file *candidate,
			     const char *where)
{
	const struct elf_file *binary = state->binary;
	char candidate_hex[BUILD_ID_HEX_MAX];
	uint32_t crc;

	if (binary->build_id.size) {
		if (build_id_equal(&binary->build_id, &candidate->build_id))
			return true;
		build_id_to_hex(&candidate->build_id, candidate_hex);
		symbols_log(state->search->log,
			    "ignoring %s: its build-id (%s) is not the one of %s (%s); use the "
			    "debug file of this exact build",
			    where, candidate->build_id.size ? candidate_hex : "none",
			    state->binary_path, state->hex);
		return false;
	}
	if (binary->debuglink.name[0]) {
		if (debuglink_crc_of_file(candidate->fd, &crc) && crc == binary->debuglink.crc)
			return true;
		symbols_log(
		    state->search->log,
		    "ignoring %s: its CRC-32 differs from the .gnu_debuglink of %s; use the "
		    "debug file of this exact build",
		    where, state->binary_path);
		return false;
	}
	symbols_log(state->search->log,
		    "ignoring %s: %s has neither a build-id nor a .gnu_debuglink to check it "
		    "against",
		    where, state->binary_path);
	return false;
}

/* Opens `path` inside `root_fd` (-1: our own file system) and keeps it when
 * it is this binary's debug file. */
static struct elf_file *try_file(struct search_state *state, int root_fd, const char *path,
				 char *where, size_t where_size)
{
	struct elf_file *candidate;
	char key[PATH_MAX + 8];

	snprintf(key, sizeof(key), "%c%s", root_fd < 0 ? 'O' : 'T', path);
	if (already_tried(state, key))
		return NULL;
	candidate = elf_file_open(target_file_open(root_fd, path, 0));
	if (!candidate)
		return NULL;
	snprintf(where, where_size, "%s%s", path, root_fd < 0 ? "" : " (in the target's root)");
	if (identity_matches(state, candidate, where)) {
		if (elf_file_has_symtab(candidate))
			return candidate;
		symbols_log(state->search->log, "ignoring %s: it has no symbol table", where);
	}
	elf_file_close(candidate);
	return NULL;
}

/* Tries a path of the target's layout: inside its root, then in ours. */
static struct elf_file *try_target_path(struct search_state *state, char *where, size_t where_size,
					const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static struct elf_file *try_target_path(struct search_state *state, char *where, size_t where_size,
					const char *format, ...)
{
	char path[PATH_MAX];
	struct elf_file *found = NULL;
	va_list arguments;
	int length;

	va_start(arguments, format);
	length = vsnprintf(path, sizeof(path), format, arguments);
	va_end(arguments);
	if (length < 0 || (size_t)length >= sizeof(path))
		return NULL;
	if (state->search->target_root_fd >= 0)
		found = try_file(state, state->search->target_root_fd, path, where, where_size);
	if (!found)
		found = try_file(state, -1, path, where, where_size);
	return found;
}

static struct elf_file *try_symbol_folder(struct search_state *state, const char *folder,
					  const char *base, char *where, size_t where_size)
{
	const char *link = state->binary->debuglink.name;
	const char *hex = state->hex;
	char path[PATH_MAX];
	struct elf_file *found = NULL;

	if (link[0] && snprintf(path, sizeof(path), "%s/%s", folder, link) < (int)sizeof(path))
		found = try_file(state, -1, path, where, where_size);
	if (!found && snprintf(path, sizeof(path), "%s/%s.dbg", folder, base) < (int)sizeof(path))
		found = try_file(state, -1, path, where, where_size);
	if (!found && snprintf(path, sizeof(path), "%s/%s.debug", folder, base) < (int)sizeof(path))
		found = try_file(state, -1, path, where, where_size);
	if (state->binary->build_id.size < 2)
		return found;
	if (!found && snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", folder, hex,
			       hex + 2) < (int)sizeof(path))
		found = try_file(state, -1, path, where, where_size);
	if (!found && snprintf(path, sizeof(path), "%s/%.2s/%s.debug", folder, hex, hex + 2) <
			  (int)sizeof(path))
		found = try_file(state, -1, path, where, where_size);
	if (!found && symbol_server_key_path(folder, &state->binary->build_id, path, sizeof(path)))
		found = try_file(state, -1, path, where, where_size);
	return found;
}

static struct elf_file *search_everywhere(struct search_state *state, const char *dir,
					  const char *base, char *where, size_t where_size)
{
	const struct debug_search *search = state->search;
	const char *link = state->binary->debuglink.name;
	const char *hex = state->hex;
	struct elf_file *found = NULL;
	char *cached;

	if ((found = try_target_path(state, where, where_size, "%s/%s.dbg", dir, base)) ||
	    (found = try_target_path(state, where, where_size, "%s/%s.debug", dir, base)))
		return found;
	if (link[0] &&
	    ((found = try_target_path(state, where, where_size, "%s/%s", dir, link)) ||
	     (found = try_target_path(state, where, where_size, "%s/.debug/%s", dir, link)) ||
	     (found = try_target_path(state, where, where_size, "/usr/lib/debug%s/%s", dir, link))))
		return found;
	if (state->binary->build_id.size >= 2 &&
	    (found = try_target_path(state, where, where_size,
				     "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2)))
		return found;
	for (size_t i = 0; search->symbol_dirs && search->symbol_dirs[i]; i++)
		if ((found =
			 try_symbol_folder(state, search->symbol_dirs[i], base, where, where_size)))
			return found;
	if (!search->server || state->binary->build_id.size == 0)
		return NULL;
	cached = symbol_server_fetch(search->server, &state->binary->build_id, state->binary_path);
	if (cached) {
		found = try_file(state, -1, cached, where, where_size);
		free(cached);
	}
	return found;
}

struct elf_file *debug_file_find(const struct debug_search *search, const char *path,
				 const struct elf_file *binary, char *where, size_t where_size)
{
	struct search_state state = {.search = search, .binary = binary, .binary_path = path};
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct elf_file *found;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return NULL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	build_id_to_hex(&binary->build_id, state.hex);
	found = search_everywhere(&state, dir, slash + 1, where, where_size);
	for (size_t i = 0; i < state.tried_count; i++)
		free(state.tried[i]);
	free(state.tried);
	return found;
}
