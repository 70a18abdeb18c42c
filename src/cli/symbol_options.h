/* The options that say where native debug information is, shared by the
 * commands that symbolize (collect, postprocess). */
#ifndef PROFCPU_SYMBOL_OPTIONS_H
#define PROFCPU_SYMBOL_OPTIONS_H

#include "native_symbols.h"
#include "options.h"

struct symbol_options {
	struct string_list dirs; /* --symbols DIR, then $PROFCPU_SYMBOL_PATH */
	const char *server;	 /* --symbol-server URL, or $DEBUGINFOD_URLS */
	bool inline_frames;	 /* --inline */
	char *cache_dir;
	char *path_copy; /* $PROFCPU_SYMBOL_PATH, split in place */
};

#define SYMBOL_OPTION_ENTRIES(symbol_options)                                                      \
	{"symbols", NULL, OPTION_STRING_LIST, &(symbol_options)->dirs},                            \
	    {"symbol-server", NULL, OPTION_STRING, &(symbol_options)->server},                     \
	{                                                                                          \
		"inline", NULL, OPTION_FLAG, &(symbol_options)->inline_frames                      \
	}

#define SYMBOL_OPTIONS_USAGE                                                                       \
	"  --symbols DIR         also look for debug files in DIR (repeatable; also\n"             \
	"                        $PROFCPU_SYMBOL_PATH, colon-separated)\n"                         \
	"  --symbol-server URL   download debug files by build-id (Microsoft symbol\n"             \
	"                        server or debuginfod layout; also $DEBUGINFOD_URLS)\n"            \
	"  --inline              add inlined calls as frames (from DWARF)\n"

/* Fills `config` from the options. The config points into `options`, which
 * must outlive it. */
void symbol_options_apply(struct symbol_options *options, int target_root_fd, FILE *log,
			  struct native_symbols_config *config);
void symbol_options_release(struct symbol_options *options);

#endif
