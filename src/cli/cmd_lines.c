/* profcpu lines: the hottest source lines of a capture, with their source
 * text, as `perf annotate --stdio` lists them. */
#include "commands.h"
#include "emit.h"
#include "postprocess.h"
#include "symbol_options.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>

static const char usage[] =
    "usage: profcpu lines -dir DIR [options]\n"
    "\n"
    "Symbolizes DIR/perf.data (made by profcpu collect or by perf record -g)\n"
    "and prints the functions with the most samples on a known source line,\n"
    "hottest first, each with its lines' share of all samples and the source\n"
    "text around them. Lines come from DWARF for native code and from the\n"
    "portable PDB beside a .NET assembly (docs/SOURCE_LINES.md); the source\n"
    "is read from the path the debug information gives, or under --source.\n"
    "Writes nothing into DIR.\n"
    "\n"
    "options:\n"
    "  -dir DIR              the capture folder\n"
    "  --top N               how many functions to list (default 10)\n"
    "  --source DIR          look for source files under DIR too, by their\n"
    "                        path or its tail (a tree built elsewhere)\n" SYMBOL_OPTIONS_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu lines -dir out                    # the ten hottest functions' lines\n"
    "    profcpu lines -dir out --top 3 --inline   # lines inside inlined calls too\n"
    "    profcpu lines -dir out --source ~/src/app # sources checked out elsewhere\n";

int cmd_lines(int argc, char **argv)
{
	enum options_result parsed;
	const char *dir = NULL, *source_dir = NULL;
	long top = HOT_LINES_FUNCTIONS;
	struct symbol_options symbols = {0};
	const struct option options[] = {
	    {"dir", "d", OPTION_STRING, &dir},
	    {"top", NULL, OPTION_INTEGER, &top},
	    {"source", NULL, OPTION_STRING, &source_dir},
	    SYMBOL_OPTION_ENTRIES(&symbols),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct resolver_config config = {0};
	struct profile profile;
	int status;

	parsed = options_parse_folder(options, argc, argv, usage, &dir,
				      "lines needs the capture folder: profcpu lines -dir DIR");
	if (parsed != OPTIONS_PARSED)
		return options_exit_status(parsed);
	if (top < 1) {
		report_error("invalid --top %ld: give 1 or more functions", top);
		return 2;
	}
	symbol_options_apply(&symbols, -1, NULL, &config.native);
	config.capture_dir = dir;
	signal(SIGPIPE, SIG_IGN);
	status = postprocess_read_profile(dir, &config, &profile);
	if (status == 0)
		status = emit_hot_lines(&profile, (size_t)top,
					&(struct hot_lines_source){source_dir}, stdout);
	profile_release(&profile);
	symbol_options_release(&symbols);
	return status == 0 ? 0 : 1;
}
