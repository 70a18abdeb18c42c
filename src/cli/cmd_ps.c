/* profcpu ps: the processes profcpu can see, to find the pid to profile
 * from a sidecar or a node, where there is often no ps. */
#include "commands.h"
#include "options.h"
#include "process_listing.h"

#include <stdlib.h>

static const char usage[] =
    "usage: profcpu ps [options]\n"
    "\n"
    "Lists the processes profcpu can see, busiest first: the pid (and the pid\n"
    "the process sees in its own namespace), the name, the runtime (.NET with\n"
    "its version, node, or native), CPU use over the last half second, the\n"
    "container and Kubernetes pod it runs in (from its cgroup), and whether it\n"
    "writes a perf map (JIT frames named without the diagnostics IPC).\n"
    "\n"
    "options:\n"
    "  -json                 one JSON object, as profcpu serve's /processes\n"
    "\n"
    "EXAMPLES:\n"
    "    profcpu ps                                   # in a sidecar: which pid is the app\n"
    "    profcpu collect -pid \"$(profcpu ps -json | jq '.processes[0].pid')\" -duration 30\n"
    "                                                 # profile the busiest process\n";

int cmd_ps(int argc, char **argv)
{
	bool json = false;
	struct string_list positionals = {0};
	const struct option options[] = {
	    {"json", NULL, OPTION_FLAG, &json},
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct process_facts *facts;
	size_t count;
	enum options_result parsed =
	    options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);
	size_t extra = positionals.count;

	string_list_clear(&positionals);
	if (parsed != OPTIONS_PARSED)
		return options_exit_status(parsed);
	if (extra) {
		fprintf(stderr, "profcpu: ps takes no arguments (see profcpu ps --help)\n");
		return 2;
	}
	count = process_facts_gather(&facts, 500);
	if (json)
		process_listing_write_json(stdout, facts, count);
	else
		process_listing_print_table(stdout, facts, count);
	free(facts);
	return 0;
}
