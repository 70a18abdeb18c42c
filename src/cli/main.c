/* profcpu: a CPU profiler for .NET and native processes on Linux. */
#include "commands.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"collect", cmd_collect, "sample a running process and write all outputs"},
    {"watch", cmd_watch, "keep the last seconds sampled; capture them when a rule fires"},
    {"postprocess", cmd_postprocess, "write the outputs again from a capture folder"},
    {"lines", cmd_lines, "list the hottest source lines of a capture, with their source"},
    {"flamegraph", cmd_flamegraph, "draw an interactive flame graph SVG from folded stacks"},
    {"diff", cmd_diff, "join two folded captures for a differential flame graph"},
    {"push", cmd_push, "send a capture's profile to a Pyroscope server"},
    {"view", cmd_view, "summarize a NAME.trace.zip (perfcollect's format) in the terminal"},
    {"ps", cmd_ps, "list the processes profcpu can see: runtime, CPU, container, pod"},
    {"serve", cmd_serve, "answer HTTP: list processes, capture one, download the results"},
    {"agent", cmd_agent, "profile every process of the node into Pyroscope, until stopped"},
};

static void print_usage(FILE *out)
{
	fprintf(out, "usage: profcpu <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(
	    out,
	    "\n'profcpu <command> --help' describes a command.\n"
	    "\nEXAMPLES:\n"
	    "    profcpu collect -pid 1 -duration 30   # profile PID 1 for 30 seconds\n"
	    "    profcpu postprocess -dir profilings/10-31-07_2026-11-22  # redo the outputs\n"
	    "    profcpu collect sample -pid 1 -collectsec 30  # ./sample.trace.zip for PerfView\n"
	    "    profcpu view sample.trace.zip                 # its hottest functions\n"
	    "    profcpu lines -dir profilings/10-31-07_2026-11-22  # its hottest source lines\n"
	    "    profcpu ps                                    # which pid is the app\n"
	    "\nInstalled as perfcollect too: 'perfcollect collect sample -pid 1' works.\n");
}

/* Buffers of a few MiB come and go all through a capture (copies, parses,
 * the outputs' text): keep them in the heap, where the next one reuses pages
 * already touched, instead of a fresh mapping each time (a fifth fewer page
 * faults in a collect; docs/BENCHMARKS.md). */
static void keep_freed_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
}

int main(int argc, char **argv)
{
	keep_freed_memory();
	/* GNU basename (string.h): leaves argv[0] alone. */
	if (!strcmp(basename(argv[0]), "perfcollect"))
		return perfcollect_main(argc, argv);
	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("profcpu %s\n", PROFCPU_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "profcpu: unknown command '%s' (see profcpu --help)\n", argv[1]);
	return 2;
}
