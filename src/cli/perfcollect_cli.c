/* The perfcollect command: profcpu installed under perfcollect's name, so
 * scripts and runbooks written for perfcollect run unchanged. collect and
 * view are profcpu's own commands; install and setenv say what profcpu
 * needs instead of changing the machine. */
#include "commands.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: perfcollect <action> <tracename> [options]\n"
    "\n"
    "profcpu %s standing in for perfcollect: no perf, LTTng or zip needed.\n"
    "\n"
    "actions:\n"
    "  collect NAME    sample the whole machine, or one process (-pid,\n"
    "                  -processfilter), into ./NAME.trace.zip (see\n"
    "                  'perfcollect collect --help')\n"
    "  view NAME.trace.zip   a summary of a trace in the terminal\n"
    "  install         say what profcpu needs (nothing is installed)\n"
    "  setenv          print the environment an app started with\n"
    "                  DOTNET_EnableDiagnostics=0 needs (others need none)\n"
    "\n"
    "EXAMPLES:\n"
    "    perfcollect collect sample -pid 1                   # until Ctrl-C\n"
    "    perfcollect collect sample -nolttng -pid 1 -collectsec 30  # 30 seconds\n"
    "    perfcollect view sample.trace.zip                   # what was hot\n"
    "    eval \"$(perfcollect setenv)\"   # then start an app without diagnostics\n";

static int print_requirements(void)
{
	FILE *file = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int paranoid = 2;

	if (file) {
		if (fscanf(file, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(file);
	}
	printf("perfcollect install: nothing to install. profcpu samples with perf_event_open\n"
	       "itself and writes the zip itself: perf, LTTng, zip and unzip are not needed.\n"
	       "\n"
	       "It needs:\n"
	       "  - root, or CAP_PERFMON and CAP_SYS_PTRACE (containers: --cap-add PERFMON\n"
	       "    --cap-add SYS_PTRACE, and the target's PID namespace);\n"
	       "  - kernel.perf_event_paranoid 2 or lower for user-space stacks, 1 or lower\n"
	       "    for kernel frames too (here: %d);\n"
	       "  - nothing of .NET targets: a .NET 8+ runtime is asked for its perf map through\n"
	       "    its diagnostics socket, an older one's JIT methods are named from its\n"
	       "    runtime events; only an app started with DOTNET_EnableDiagnostics=0 needs\n"
	       "    DOTNET_PerfMapEnabled=1 at its start (perfcollect setenv).\n",
	       paranoid);
	return 0;
}

/* perfcollect starts a shell with the variables set; printing them lets
 * `eval "$(perfcollect setenv)"` do the same in the user's own shell. */
static int print_environment(void)
{
	printf("# Not needed for a running .NET app: perfcollect collect asks .NET 8+ for\n"
	       "# its perf map and names older runtimes' JIT methods from their events.\n"
	       "# For an app started with DOTNET_EnableDiagnostics=0: start it with these.\n"
	       "export DOTNET_PerfMapEnabled=1\n"
	       "# The same for .NET Core 3.1 and older.\n"
	       "export COMPlus_PerfMapEnabled=1\n");
	return 0;
}

int perfcollect_main(int argc, char **argv)
{
	const char *action = argc > 1 ? argv[1] : NULL;

	if (!action || !strcmp(action, "--help") || !strcmp(action, "-help") ||
	    !strcmp(action, "-h") || !strcmp(action, "help")) {
		printf(usage, PROFCPU_VERSION);
		return action ? 0 : 2;
	}
	if (!strcmp(action, "collect")) {
		if (argc < 3 || argv[2][0] == '-') {
			if (argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
				return cmd_collect(argc - 1, argv + 1);
			report_error("perfcollect collect needs a trace name: perfcollect collect "
				     "NAME -pid PID");
			return 2;
		}
		return cmd_collect(argc - 1, argv + 1);
	}
	if (!strcmp(action, "view"))
		return cmd_view(argc - 1, argv + 1);
	if (!strcmp(action, "install"))
		return print_requirements();
	if (!strcmp(action, "setenv"))
		return print_environment();
	if (!strcmp(action, "start") || !strcmp(action, "stop") || !strcmp(action, "livetrace")) {
		report_error("perfcollect %s collects LTTng events only, which profcpu does not "
			     "record: use perfcollect collect NAME -pid PID",
			     action);
		return 2;
	}
	report_error("unknown perfcollect action '%s': collect, view, install or setenv", action);
	return 2;
}
