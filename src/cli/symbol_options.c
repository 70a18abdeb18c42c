#include "symbol_options.h"
#include "util.h"

void symbol_options_apply(struct symbol_options *options, int target_root_fd, FILE *log,
			  struct native_symbols_config *config)
{
	/* The config wants a NULL-terminated array. */
	string_list_append(&options->dirs, NULL);
	options->dirs.count--;
	*config = (struct native_symbols_config){
	    .target_root_fd = target_root_fd,
	    .symbol_dirs = options->dirs.items,
	    .symbol_server = options->server,
	    .inline_frames = options->inline_frames,
	    .log = log,
	};
}

void symbol_options_release(struct symbol_options *options)
{
	string_list_clear(&options->dirs);
}
