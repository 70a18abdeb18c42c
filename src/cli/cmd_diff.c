/* profcpu diff: joins two folded captures into one two-column folded file
 * ("stack BEFORE AFTER") for a differential flame graph. */
#include "commands.h"
#include "flamegraph.h"
#include "options.h"
#include "util.h"

#include <errno.h>
#include <string.h>

static const char usage[] =
    "usage: profcpu diff [options] BEFORE.folded AFTER.folded > diff.folded\n"
    "\n"
    "Joins two folded captures stack by stack into \"stack BEFORE AFTER\" lines\n"
    "(0 where a stack is missing from one side), sorted by stack. 'profcpu\n"
    "flamegraph' draws them as a differential flame graph: frame widths from\n"
    "AFTER, red where a frame grew, blue where it shrank.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE    where to write (default: standard output)\n"
    "  -n, --normalize      scale BEFORE counts to AFTER's total, to compare two\n"
    "                       captures of different lengths by share of time\n"
    "\n"
    "EXAMPLES:\n"
    "    profcpu diff before.folded after.folded > diff.folded  # join two captures\n"
    "    profcpu diff -n v1.folded v2.folded | profcpu flamegraph > diff.svg  # draw it\n";

/* Adds one capture's counts to one side of the graph; -1 after a message. */
static int read_side(struct flamegraph *graph, const char *path, enum folded_columns side)
{
	struct folded_read_stats stats;
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	int status = 0;

	if (!in) {
		report_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flamegraph_read_folded(graph, in, side, &stats)) {
		report_error("cannot read %s: %s", path, strerror(errno));
		status = -1;
	} else if (!stats.stacks) {
		report_error("no stacks in %s: %s", path,
			     stats.lines ? "no line has the folded form \"frame;frame;... COUNT\""
					 : "the file is empty");
		status = -1;
	} else if (stats.bad_lines) {
		report_warning("skipped %zu bad line%s in %s (first: line %zu)", stats.bad_lines,
			       stats.bad_lines == 1 ? "" : "s", path, stats.first_bad_line);
	}
	if (in != stdin)
		fclose(in);
	return status;
}

int cmd_diff(int argc, char **argv)
{
	enum options_result parsed;
	const char *output = NULL;
	bool normalize = false;
	struct string_list positionals = {0};
	struct flamegraph *graph = NULL;
	FILE *out = stdout;
	const struct option options[] = {
	    {"output", "o", OPTION_STRING, &output},
	    {"normalize", "n", OPTION_FLAG, &normalize},
	    {NULL, NULL, 0, NULL},
	};
	int status = 1;

	parsed = options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);
	if (parsed != OPTIONS_PARSED) {
		status = options_exit_status(parsed);
		goto done;
	}
	if (positionals.count != 2) {
		report_error("give two folded files: BEFORE and AFTER (see --help)");
		goto done;
	}
	graph = flamegraph_new(FLAMEGRAPH_MERGED);
	if (read_side(graph, positionals.items[0], FOLDED_AS_BEFORE) ||
	    read_side(graph, positionals.items[1], FOLDED_AS_AFTER))
		goto done;
	if (normalize)
		flamegraph_normalize_before(graph);
	if (output && strcmp(output, "-") && !(out = fopen(output, "w"))) {
		report_error("cannot create %s: %s", output, strerror(errno));
		goto done;
	}
	if (flamegraph_write_folded(graph, out))
		report_error("cannot write %s: %s", out == stdout ? "standard output" : output,
			     strerror(errno));
	else
		status = 0;
	if (out != stdout && fclose(out) && !status) {
		report_error("cannot write %s: %s", output, strerror(errno));
		status = 1;
	}
done:
	flamegraph_free(graph);
	string_list_clear(&positionals);
	return status;
}
