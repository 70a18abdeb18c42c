#include "symbol_options.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void symbol_options_apply(struct symbol_options *options, int target_root_fd, FILE *log,
			  struct native_symbols_config *config)
{
	const char *path = getenv("PROFCPU_SYMBOL_PATH"), *home = getenv("HOME");

	if (path && *path) {
		char *copy = xstrdup(path), *saved, *dir;

		/* The list keeps pointers into `copy`, freed with the options. */
		for (dir = strtok_r(copy, ":", &saved); dir; dir = strtok_r(NULL, ":", &saved))
			string_list_append(&options->dirs, dir);
		options->path_copy = copy;
	}
	/* The config wants a NULL-terminated array. */
	string_list_append(&options->dirs, NULL);
	options->dirs.count--;
	if (!options->server && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS"))
		options->server = getenv("DEBUGINFOD_URLS");
	if (!options->cache_dir)
		options->cache_dir =
		    xasprintf("%s/.cache/profcpu/symbols", home && *home ? home : "/tmp");
	*config = (struct native_symbols_config){
	    .target_root_fd = target_root_fd,
	    .symbol_dirs = options->dirs.items,
	    .symbol_server = options->server,
	    .cache_dir = options->cache_dir,
	    .inline_frames = options->inline_frames,
	    .log = log,
	};
}

void symbol_options_release(struct symbol_options *options)
{
	string_list_clear(&options->dirs);
	free(options->path_copy);
	free(options->cache_dir);
}
