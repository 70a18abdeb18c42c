/* profcpu postprocess: write the outputs of a capture folder again, e.g.
 * with other symbols, or from a perf.data recorded by the real perf. */
#include "commands.h"
#include "grouping_options.h"
#include "postprocess.h"
#include "symbol_options.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
    "usage: profcpu postprocess -dir DIR [options]\n"
    "\n"
    "Symbolizes DIR/perf.data (made by profcpu collect or by perf record -g)\n"
    "and writes folded_stacks.out, perf_script.out, flamegraph.svg,\n"
    "profile.pb.gz (pprof), speedscope.json, prof.tar.gz and prof.trace.zip\n"
    "(for PerfView) into DIR. JIT frames are named from DIR/jit-<pid>.dump\n"
    "and DIR/perf-<pid>.map (collect's copies), or from /tmp/jit-<pid>.dump\n"
    "and /tmp/perf-<pid>.map.\n"
    "\n"
    "options:\n"
    "  -dir DIR              the capture folder\n" SYMBOL_OPTIONS_USAGE GROUPING_OPTIONS_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu postprocess -dir profilings/10-31-07_2026-11-22   # redo the outputs\n"
    "    profcpu postprocess -dir out --symbols ~/symbols   # with downloaded .dbg files\n"
    "    profcpu postprocess -dir out --group-by tid   # a tower per thread, not per name\n";

int cmd_postprocess(int argc, char **argv)
{
	enum options_result parsed;
	const char *dir = NULL;
	struct symbol_options symbols = {0};
	struct grouping_options grouping = {0};
	struct fold_options fold;
	const struct option options[] = {
	    {"dir", "d", OPTION_STRING, &dir},
	    SYMBOL_OPTION_ENTRIES(&symbols),
	    GROUPING_OPTION_ENTRIES(&grouping),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct resolver_config config = {0};
	FILE *log;
	char *log_path;
	int status;

	parsed = options_parse_folder(
	    options, argc, argv, usage, &dir,
	    "postprocess needs the capture folder: profcpu postprocess -dir DIR");
	if (parsed != OPTIONS_PARSED)
		return options_exit_status(parsed);
	if (!grouping_options_apply(&grouping, &fold))
		return 2;
	log_path = xasprintf("%s/profcpu.log", dir);
	log = fopen(log_path, "ae");
	if (log)
		fprintf(log, "postprocess: profcpu %s\n", PROFCPU_VERSION);
	symbol_options_apply(&symbols, -1, log, &config.native);
	config.capture_dir = dir;
	/* A reader of stdout or stderr that went away must not stop the
	 * writing: the writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	status = postprocess_capture(dir, &config, NULL, &fold, NULL);
	if (status == 0)
		outputs_print_where(dir);
	if (log)
		fclose(log);
	free(log_path);
	symbol_options_release(&symbols);
	return status == 0 ? 0 : 1;
}
