/* profcpu flamegraph: folded stacks in, interactive flame graph SVG out. */
#include "commands.h"
#include "flamegraph.h"
#include "options.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: profcpu flamegraph [options] [FILE] > graph.svg\n"
    "\n"
    "Draws an interactive flame graph (SVG) from folded stacks, one per line:\n"
    "\"root;caller;leaf COUNT\". With two count columns (\"stack BEFORE AFTER\",\n"
    "as 'profcpu diff' writes) the graph is differential: frames are sized by\n"
    "AFTER, red where they grew and blue where they shrank.\n"
    "\n"
    "In the SVG: hover for details, click to zoom, Ctrl-F to search (regex),\n"
    "Ctrl-I or 'ic' for case-insensitive search, Escape to reset.\n"
    "\n"
    "options:\n"
    "  -i, --input FILE     folded stacks (default: FILE, or standard input)\n"
    "  -o, --output FILE    SVG to write (default: standard output)\n"
    "  --title TEXT         title (default: \"Flame Graph\", \"Icicle Graph\", ...)\n"
    "  --subtitle TEXT      second line under the title\n"
    "  --width PIXELS       image width (default 1200)\n"
    "  --height PIXELS      height of one frame (default 16)\n"
    "  --minwidth N[%]      leave out frames narrower than N pixels, or N% of\n"
    "                       the width (default 0.1 pixels; 0 keeps every frame)\n"
    "  --max-frames N       draw at most about N frames (default 30000, a page any\n"
    "                       browser opens at once): the narrowest are merged into\n"
    "                       one grey \"... N narrow frames merged\" frame under their\n"
    "                       parent; 0 draws every frame\n"
    "  --countname NAME     what a count is (default \"samples\")\n"
    "  --colors PALETTE     dotnet (default: managed green, C++ yellow, native red,\n"
    "                       kernel orange, stubs purple, [unknown] grey), java,\n"
    "                       hot, mem, io, red, green, blue, aqua, yellow, purple,\n"
    "                       orange\n"
    "  --hash               accepted for flamegraph.pl users: colours always come\n"
    "                       from a hash of the name\n"
    "  --inverted           icicle graph: roots at the top\n"
    "  --reverse            merge stacks from the leaf: callees at the root\n"
    "  --flamechart         keep the input order (time) instead of sorting by name\n"
    "  --notes TEXT         text kept in the SVG (<desc>)\n"
    "\n"
    "EXAMPLES:\n"
    "    profcpu flamegraph < app.folded > app.svg        # a flame graph\n"
    "    profcpu flamegraph -i app.folded -o app.svg --title 'Checkout API'  # titled\n"
    "    profcpu flamegraph --inverted --minwidth 0.5% app.folded > icicle.svg  # icicle\n"
    "    profcpu diff before.folded after.folded | profcpu flamegraph > diff.svg  # changes\n"
    "    profcpu flamegraph --max-frames 0 --minwidth 0 huge.folded > all.svg  # every frame\n";

/* "0.5" or "0.5px" pixels, or "2%" of the width. */
static int parse_min_width(const char *text, struct flamegraph_options *options)
{
	char *end;

	errno = 0;
	options->min_width = strtod(text, &end);
	options->min_width_is_percent = !strcmp(end, "%");
	if (errno || end == text || options->min_width < 0 ||
	    (*end && !options->min_width_is_percent && strcmp(end, "px"))) {
		report_error(
		    "invalid value for -minwidth: '%s' (pixels, or a percentage like 0.5%%)", text);
		return -1;
	}
	if (!options->min_width)
		options->min_width = -1; /* the library's way to say "keep every frame" */
	return 0;
}

static FILE *open_input(const char *path)
{
	FILE *in;

	if (!path || !strcmp(path, "-"))
		return stdin;
	in = fopen(path, "r");
	if (!in)
		report_error("cannot open %s: %s", path, strerror(errno));
	return in;
}

/* Reads folded stacks, reporting bad lines; NULL (after a message) when
 * the input cannot be read or holds no stack. */
static struct flamegraph *read_graph(const char *path, enum flamegraph_order order)
{
	const char *shown = path && strcmp(path, "-") ? path : "standard input";
	struct folded_read_stats stats;
	struct flamegraph *graph;
	FILE *in = open_input(path);

	if (!in)
		return NULL;
	graph = flamegraph_new(order);
	if (flamegraph_read_folded(graph, in, FOLDED_ONE_OR_TWO, &stats)) {
		report_error("cannot read %s: %s", shown, strerror(errno));
		goto fail;
	}
	if (stats.bad_lines)
		report_warning("skipped %zu bad line%s in %s (first: line %zu); expected "
			       "\"frame;frame;... COUNT\"",
			       stats.bad_lines, stats.bad_lines == 1 ? "" : "s", shown,
			       stats.first_bad_line);
	if (!stats.stacks) {
		report_error("no stacks in %s: %s", shown,
			     stats.lines ? "no line has the folded form \"frame;frame;... COUNT\""
					 : "the input is empty");
		goto fail;
	}
	if (in != stdin)
		fclose(in);
	return graph;
fail:
	if (in != stdin)
		fclose(in);
	flamegraph_free(graph);
	return NULL;
}

static int write_graph(struct flamegraph *graph, const struct flamegraph_options *options,
		       const char *path)
{
	FILE *out = path && strcmp(path, "-") ? fopen(path, "w") : stdout;
	const char *shown = out == stdout ? "standard output" : path;
	int status;

	if (!out) {
		report_error("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	status = flamegraph_write_svg(graph, options, out);
	if (status && errno == ENODATA)
		report_error("nothing to draw: every stack has a count of 0");
	else if (status)
		report_error("cannot write %s: %s", shown, strerror(errno));
	if (out != stdout && fclose(out) && !status) {
		report_error("cannot write %s: %s", shown, strerror(errno));
		status = -1;
	}
	return status;
}

int cmd_flamegraph(int argc, char **argv)
{
	enum options_result parsed;
	struct flamegraph_options graph_options = {0};
	const char *input = NULL, *output = NULL, *min_width = NULL;
	bool hash = false, flame_chart = false;
	long max_frames = -1; /* -1: not given */
	struct string_list positionals = {0};
	struct flamegraph *graph;
	const struct option options[] = {
	    {"input", "i", OPTION_STRING, &input},
	    {"output", "o", OPTION_STRING, &output},
	    {"title", NULL, OPTION_STRING, &graph_options.title},
	    {"subtitle", NULL, OPTION_STRING, &graph_options.subtitle},
	    {"width", NULL, OPTION_NUMBER, &graph_options.width},
	    {"height", NULL, OPTION_NUMBER, &graph_options.frame_height},
	    {"minwidth", NULL, OPTION_STRING, &min_width},
	    {"max-frames", NULL, OPTION_INTEGER, &max_frames},
	    {"countname", NULL, OPTION_STRING, &graph_options.count_name},
	    {"colors", "colours", OPTION_STRING, &graph_options.palette},
	    {"hash", NULL, OPTION_FLAG, &hash},
	    {"inverted", NULL, OPTION_FLAG, &graph_options.inverted},
	    {"reverse", NULL, OPTION_FLAG, &graph_options.reverse},
	    {"flamechart", NULL, OPTION_FLAG, &flame_chart},
	    {"notes", NULL, OPTION_STRING, &graph_options.notes},
	    {NULL, NULL, 0, NULL},
	};
	int status = 1;

	parsed = options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);
	if (parsed != OPTIONS_PARSED) {
		status = options_exit_status(parsed);
		goto done;
	}
	if (positionals.count > 1 || (positionals.count && input)) {
		report_error("give one input: a FILE or -i FILE (see --help)");
		goto done;
	}
	if (positionals.count)
		input = positionals.items[0];
	if (min_width && parse_min_width(min_width, &graph_options))
		goto done;
	if (graph_options.palette && !flamegraph_palette_is_known(graph_options.palette)) {
		report_error("unknown palette '%s' for -colors (see --help)",
			     graph_options.palette);
		goto done;
	}
	if (graph_options.width && (graph_options.width < 100 || graph_options.width > 100000)) {
		report_error("invalid value for -width: %g (100 to 100000 pixels)",
			     graph_options.width);
		goto done;
	}
	if (graph_options.frame_height &&
	    (graph_options.frame_height < 4 || graph_options.frame_height > 1000)) {
		report_error("invalid value for -height: %g (4 to 1000 pixels)",
			     graph_options.frame_height);
		goto done;
	}
	if (max_frames == 0)
		graph_options.max_frames = FLAMEGRAPH_ALL_FRAMES;
	else if (max_frames > 0)
		graph_options.max_frames = (size_t)max_frames;
	else if (max_frames != -1) {
		report_error("invalid value for -max-frames: %ld (a count of frames, 0 for all)",
			     max_frames);
		goto done;
	}
	graph = read_graph(input, flame_chart ? FLAMEGRAPH_CHART : FLAMEGRAPH_MERGED);
	if (graph) {
		status = write_graph(graph, &graph_options, output) ? 1 : 0;
		flamegraph_free(graph);
	}
done:
	string_list_clear(&positionals);
	return status;
}
