/* profcpu collect: sample a running process, then write every output. */
#include "capture.h"
#include "commands.h"
#include "collect_events.h"
#include "dotnet_diagnostics.h"
#include "event_options.h"
#include "grouping_options.h"
#include "jitdump.h"
#include "managed_images.h"
#include "memory_perfmap.h"
#include "memory_perfmaps.h"
#include "postprocess.h"
#include "sampling_scope.h"
#include "push_options.h"
#include "scope_options.h"
#include "stop_signals.h"
#include "symbol_options.h"
#include "target_environment.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: profcpu collect -pid PID [-duration SECONDS] [options]\n"
    "       profcpu collect -a | --cgroup PATH | --container ID [options]\n"
    "       profcpu collect NAME -pid PID [-collectsec SECONDS] [options]\n"
    "\n"
    "Samples every thread of PID (also threads started later) with the\n"
    "cpu-clock event and whole call stacks, then writes into one\n"
    "folder: perf.data, folded_stacks.out, perf_script.out, flamegraph.svg,\n"
    "profile.pb.gz (pprof), speedscope.json, prof.tar.gz, prof.trace.zip\n"
    "(perfcollect's layout, for PerfView) and a copy of the target's perf map\n"
    "and jitdump. Stops after the duration, on Ctrl-C, SIGTERM, SIGHUP or\n"
    "SIGPIPE, or when the target exits, and writes every output from what was\n"
    "collected (a second Ctrl-C aborts).\n"
    "\n"
    "The second form is perfcollect's: it writes ./NAME.trace.zip, samples at\n"
    "1000 Hz as perfcollect does, keeps no folder unless -o is given, and only\n"
    "warns about options it does not know. Without -pid, -processfilter,\n"
    "--cgroup or --container it samples the whole machine, unless NAME is\n"
    "digits alone: that is taken for a forgotten -pid and refused.\n"
    "\n"
    "JIT and ReadyToRun frames of .NET are named from its perf map and jitdump:\n"
    "a .NET 8+ target is asked to write both whole, and to stop writing them at\n"
    "the end (the files stay; one started with DOTNET_PerfMapEnabled is left\n"
    "writing them). Without them (older\n"
    "runtimes, --no-perfmap-switch), JIT frames are named from the method\n"
    "rundown of the runtime events, or a map DOTNET_PerfMapEnabled=1 made.\n"
    "A .NET 10+ target whose diagnostics IPC does not answer\n"
    "(DOTNET_EnableDiagnostics=0) has its JIT frames named from its runtime's\n"
    "memory, read as it is sampled: nothing asked of it, nothing written in it.\n"
    "A .NET target's own events (GC, exceptions, contention, JIT) are recorded\n"
    "beside the samples through EventPipe into runtime.nettrace, summarized at\n"
    "the end and by profcpu view.\n"
    "\n"
    "options:\n"
    "  -pid PID              the process to sample\n"
    "  -processfilter NAME   without -pid: the one process named NAME\n"
    "  -a, --all-cpus        every process of the machine (perfcollect's form\n"
    "                        without -pid does this); needs root, CAP_PERFMON\n"
    "                        or kernel.perf_event_paranoid <= 0; no runtime events\n"
    "  --cgroup PATH         every process of this cgroup directory, also those\n"
    "                        started while sampling (a container, a pod)\n"
    "  --container ID        the cgroup of this container: its id (podman ps,\n"
    "                        crictl ps, kubectl's containerd://ID) or its name\n"
    "  --enable-perfmaps     with those: switch on the perf map of every .NET 8+\n"
    "                        process through its diagnostics socket, to name\n"
    "                        its JIT frames (writes into its /tmp, until the end;\n"
    "                        off by default)\n"
    "  --no-perfmap-switch   leave a .NET target's perf map and jitdump as they are\n"
    "                        (nothing is written into its /tmp): JIT frames are\n"
    "                        named from a map it writes itself, else from the\n"
    "                        method rundown of its runtime events\n"
    "  --names ROUTE         where JIT frames of a .NET target get their names:\n"
    "                        perfmap (its perf map and jitdump), memory (its\n"
    "                        runtime's memory only, .NET 10+: the IPC not asked\n"
    "                        for them), auto (default: perfmap, with memory for\n"
    "                        the stubs and code it leaves unnamed; else memory);\n"
    "                        with -a, --cgroup, --container: every .NET 10+\n"
    "                        process's from its memory for what its own perf\n"
    "                        map leaves unnamed (auto, memory), or not (perfmap)\n"
    "  -duration, -collectsec SECONDS\n"
    "                        how long to sample (default: until Ctrl-C)\n"
    "  -F, -frequency HZ     samples per second of CPU time (default 99;\n"
    "                        1000 in perfcollect's form)\n"
    "  -o, -output DIR       output folder (default profilings/HH-MM-SS_YYYY-MM-DD)\n"
    "  -buffersize SIZE      ring buffer per CPU: pages, or bytes with a B, K, M or\n"
    "                        G suffix (100M); rounded up to a power of two of\n"
    "                        pages (default 256 pages)\n"
    "  -hwevents             sample CPU cycles; cpu-clock where the CPU has no PMU\n"
    "  --off-cpu             also record when threads leave the CPU, with their\n"
    "                        stacks: off-CPU and wall flame graphs (the tracepoint\n"
    "                        sched:sched_switch where tracefs is readable, else\n"
    "                        the context-switches event: nothing to mount); ring\n"
    "                        buffers of 2048 pages unless -buffersize\n"
    "  -threadtime, -offcpu  perfcollect's names for --off-cpu: PerfView's Thread\n"
    "                        Time view then shows blocked time\n"
    "  -no-compress          write perf.data records without zstd\n"
    "  --call-graph MODE     how stacks are unwound (default hybrid):\n"
    "                        fp      frame pointers, as perf record -g\n"
    "                        dwarf   call frame information over a copy of the\n"
    "                                user stack, as perf record --call-graph dwarf\n"
    "                        hybrid  both: CFI where a module has it, frame\n"
    "                                pointers through JIT code, and the kernel's\n"
    "                                frame-pointer chain where the copy ends\n"
    "  --stack-size BYTES    user stack copied per sample in dwarf and hybrid\n"
    "                        modes (default 16384, at most 65528)\n" SYMBOL_OPTIONS_USAGE
	GROUPING_OPTIONS_USAGE
    "  --push URL            then send profile.pb.gz to the Pyroscope server at URL,\n"
    "                        labelled with the process, hostname, container and "
    "pod\n"
    "  --push-interval SECS  with --push: a capture and a push every SECS seconds\n"
    "                        into the same folder, until the duration or "
    "Ctrl-C\n" PUSH_OPTIONS_USAGE "\n" EVENT_OPTIONS_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu collect -pid 1 -duration 30           # PID 1 for 30 seconds\n"
    "    profcpu collect -pid 4711 -duration 10 -o out/  # into the folder out/\n"
    "    profcpu collect -pid 4711 -F 999               # finer sampling until Ctrl-C\n"
    "    profcpu collect -pid 4711 --call-graph fp      # smallest capture, as perf record -g\n"
    "    profcpu collect sample -pid 1 -collectsec 30   # ./sample.trace.zip for PerfView\n"
    "    profcpu collect sample -processfilter dotnet   # the one dotnet process, until Ctrl-C\n"
    "    profcpu collect -pid 4711 -duration 60 --push http://pyroscope:4040  # to Pyroscope\n"
    "    profcpu collect -pid 4711 --push http://pyroscope:4040 --push-interval 10  # continuous\n"
    "    profcpu collect gc -pid 1 -gccollectonly -noperf  # GC events only, no samples\n";

enum { MAX_DURATION = 365 * 24 * 3600, OFF_CPU_BUFFER_PAGES = 2048 };

struct collect_options {
	long frequency, buffer_pages, stack_size;
	double duration;
	const char *output_dir, *buffer_size, *process_filter, *call_graph_text;
	enum call_graph_mode call_graph;
	const char *trace_name; /* perfcollect's form: collect NAME */
	bool no_compress, hardware_events, thread_time, off_cpu;
	struct scope_options scope; /* every_process: also perfcollect's form without -pid */
	bool enable_perfmaps;	    /* of every .NET process sampled */
	bool no_perfmap_switch;	    /* leave the target's perf map as it is */
	const char *names_text;	    /* --names */
	enum jit_names names;
	struct symbol_options symbols;
	struct grouping_options grouping;
	struct event_options events;
	struct eventpipe_config events_config;
	bool events_wanted;
	const char *push_url;
	double push_interval; /* seconds a period; 0: one capture */
	struct push_options push;
};

/* mkdir -p */
static int make_directories(const char *path)
{
	char *copy = xstrdup(path);
	int status = 0;

	for (char *slash = copy + 1; status == 0; slash++) {
		if (*slash != '/' && *slash != '\0')
			continue;
		char end = *slash;

		*slash = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			status = -1;
		*slash = end;
		if (end == '\0')
			break;
	}
	free(copy);
	return status;
}

static char *default_output_dir(void)
{
	char name[64];
	time_t now = time(NULL);

	strftime(name, sizeof(name), "profilings/%H-%M-%S_%Y-%m-%d", localtime(&now));
	return xstrdup(name);
}

/* perfcollect's -buffersize: pages, or bytes with a B/K/M/G suffix (perf
 * record --mmap-pages), rounded up to a power of two of pages. */
static int parse_buffer_size(const char *text, long *pages)
{
	static const char suffixes[] = "BKMG";
	unsigned long long value, page_size = (unsigned long long)sysconf(_SC_PAGESIZE);
	const char *suffix;
	char *end;
	long rounded = 1;

	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || end == text || *text == '-' || value == 0 ||
	    (*end && (end[1] || !(suffix = strchr(suffixes, toupper((unsigned char)*end)))))) {
		report_error("invalid -buffersize '%s': give pages (256) or a size (512K, 100M)",
			     text);
		return -1;
	}
	if (*end) {
		for (const char *unit = suffixes; unit < suffix; unit++)
			value = value > (1ULL << 40) ? value : value * 1024;
		value = (value + page_size - 1) / page_size;
	}
	while ((unsigned long long)rounded < value && rounded < (1L << 20))
		rounded *= 2;
	if ((unsigned long long)rounded < value) {
		report_error("invalid -buffersize '%s': at most %ld pages per CPU", text, rounded);
		return -1;
	}
	if ((unsigned long long)rounded != value && !*end)
		report_warning("-buffersize %s rounded up to %ld pages, a power of two", text,
			       rounded);
	*pages = rounded;
	return 0;
}

static int check_call_graph_options(struct collect_options *options)
{
	if (options->call_graph_text &&
	    !call_graph_parse(options->call_graph_text, &options->call_graph)) {
		report_error("invalid --call-graph %s: give fp, dwarf or hybrid",
			     options->call_graph_text);
		return -1;
	}
	if (options->stack_size < 8 || options->stack_size > CALL_GRAPH_MAX_STACK_SIZE ||
	    options->stack_size % 8) {
		report_error("invalid --stack-size %ld: give a multiple of 8 from 8 to %d bytes",
			     options->stack_size, CALL_GRAPH_MAX_STACK_SIZE);
		return -1;
	}
	return 0;
}

static bool all_digits(const char *text)
{
	return *text && strspn(text, "0123456789") == strlen(text);
}

static int check_options(struct collect_options *options)
{
	if (options->scope.pid == 0 && !options->process_filter && !options->scope.cgroup &&
	    !options->scope.container_id && options->trace_name && !options->scope.every_process &&
	    all_digits(options->trace_name)) {
		/* `collect 4711` is a forgotten -pid far more often than a trace
		 * named 4711 of the whole machine. */
		report_error("collect %s: a trace name of digits alone, and no process: to sample "
			     "process %s give -pid %s; for the whole machine give -a, or a name "
			     "with a letter",
			     options->trace_name, options->trace_name, options->trace_name);
		return -1;
	}
	if (options->scope.pid == 0 && !options->process_filter && !options->scope.cgroup &&
	    !options->scope.container_id && options->trace_name)
		options->scope.every_process = true; /* perfcollect's default: the whole machine */
	if (options->scope.pid == 0 && !options->process_filter && !options->scope.every_process &&
	    !options->scope.cgroup && !options->scope.container_id) {
		report_error("collect needs the process to sample: profcpu collect -pid PID "
			     "or every process: -a, --cgroup PATH, --container ID");
		return -1;
	}
	if (options->frequency < 1 || options->frequency > 100000) {
		report_error("invalid -frequency %ld: give 1 to 100000 samples per second",
			     options->frequency);
		return -1;
	}
	if (options->duration < 0 || options->duration > MAX_DURATION) {
		report_error("invalid -duration %g: give seconds (at most %d, a year), or 0 for "
			     "until Ctrl-C",
			     options->duration, MAX_DURATION);
		return -1;
	}
	if (scope_options_check_pid(&options->scope) < 0)
		return -1;
	if (options->names_text && !jit_names_parse(options->names_text, &options->names)) {
		report_error("invalid --names %s: give perfmap, memory or auto",
			     options->names_text);
		return -1;
	}
	if (options->push_interval < 0 || (options->push_interval > 0 && !options->push_url)) {
		report_error("-push-interval needs a positive number of seconds and --push URL");
		return -1;
	}
	if (options->push_url && push_options_prepare(&options->push, options->push_url) < 0)
		return -1;
	if (options->buffer_size && parse_buffer_size(options->buffer_size, &options->buffer_pages))
		return -1;
	/* A switch record carries a stack copy as a sample does, and a busy
	 * service switches thousands of times a second. */
	if (!options->buffer_size && (options->off_cpu || options->thread_time))
		options->buffer_pages = OFF_CPU_BUFFER_PAGES;
	switch (event_options_config(&options->events, &options->events_config)) {
	case -1:
		return -1;
	case 0:
		options->events_wanted = false;
		break;
	default:
		options->events_wanted = true;
	}
	return check_call_graph_options(options);
}

/* perfcollect options profcpu accepts without doing what perfcollect does:
 * say so once, rather than pretend. */
static void warn_about_perfcollect_options(const struct collect_options *options, bool pid_given,
					   FILE *log)
{
	if (options->process_filter && pid_given)
		report_warning("-processfilter %s is ignored: -pid %ld names the process",
			       options->process_filter, options->scope.pid);
	else if (options->process_filter)
		fprintf(log, "-processfilter %s: pid %ld, the one process of that name\n",
			options->process_filter, options->scope.pid);
}

/* What a reader of the trace needs to know about this machine and target:
 * perfcollect's log holds the same. */
static void log_environment(FILE *log, const struct target_process *target,
			    const struct collect_options *options)
{
	static const char *const variables[] = {"DOTNET_PerfMapEnabled", "COMPlus_PerfMapEnabled",
						"DOTNET_PerfMapJitDumpPath", "TMPDIR"};
	struct utsname system;
	char paranoid[16] = "?";
	FILE *file = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	if (file) {
		if (fgets(paranoid, sizeof(paranoid), file))
			paranoid[strcspn(paranoid, "\n")] = '\0';
		fclose(file);
	}
	uname(&system);
	fprintf(log, "machine: %s %s %s %s %s\nkernel.perf_event_paranoid: %s\n", system.sysname,
		system.nodename, system.release, system.version, system.machine, paranoid);
	for (size_t i = 0;
	     i < sizeof(variables) / sizeof(*variables) && target->pid != TARGET_EVERY_PROCESS;
	     i++) {
		char value[PATH_MAX];

		fprintf(log, "target %s: %s\n", variables[i],
			target_environment_value(target->pid, variables[i], value, sizeof(value))
			    ? value
			    : "(not set)");
	}
	fprintf(log, "lttng: not recorded (%s)\n",
		options->events.no_events ? "-nolttng" : "runtime events come through EventPipe");
}

static char *make_temporary_dir(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	char *base = xstrdup(name), *template;

	template = xasprintf("%s/profcpu-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", basename(base));
	free(base);
	if (!mkdtemp(template)) {
		report_error("cannot make a temporary folder %s: %s; choose a folder with -o DIR",
			     template, strerror(errno));
		free(template);
		return NULL;
	}
	return template;
}

/* perfcollect's form starts with the trace NAME: collect NAME -pid N. */
/* Writes every output of the capture in `dir` and, with --push, sends its
 * profile. Returns the exit status: 0, or 1 when an output or the push
 * failed (the other outputs are still written). */
static int write_outputs_and_push(struct collect_options *options, const char *dir,
				  const struct resolver_config *config, const struct trace_zip *zip,
				  const struct fold_options *fold, const char *zip_path,
				  struct runtime_trace *trace, FILE *log)
{
	char *flamegraph_path;
	int status;

	fflush(log);
	status = postprocess_capture(dir, config, zip, fold, trace) == 0 ? 0 : 1;
	flamegraph_path = outputs_flamegraph_path(dir);
	if (status == 0 && zip_path)
		printf("profcpu: trace saved to %s%s\n", zip_path,
		       flamegraph_path ? " (flamegraph.svg inside)" : "");
	else if (status == 0)
		outputs_print_where(dir);
	free(flamegraph_path);
	/* Whatever the outputs, a profile that was written is sent. */
	if (options->push_url && push_options_push(&options->push, dir) < 0)
		status = 1;
	return status;
}

/* -noperf: the archives of the runtime events and the log. */
static int write_events_only_outputs(const char *dir, const struct trace_zip *zip,
				     const char *zip_path)
{
	if (outputs_write_archives(dir, zip) < 0)
		return 1;
	if (zip_path)
		printf("profcpu: trace saved to %s (%s inside)\n", zip_path,
		       OUTPUTS_RUNTIME_EVENTS);
	else
		printf("profcpu: runtime events: %s/%s; in %s/prof.trace.zip\n", dir,
		       OUTPUTS_RUNTIME_EVENTS, dir);
	return 0;
}

/* -a, --cgroup or --container, which sample no runtime's events (EventPipe
 * sessions are per process). */
static int open_sampling_scope(struct collect_options *options, struct target_process *target,
			       char **cgroup, struct fold_options *fold)
{
	options->events_wanted = false;
	return scope_options_open_every_process(&options->scope, &options->grouping, target, cgroup,
						fold);
}

static bool is_perfcollect_form(int argc, char **argv)
{
	return argc > 1 && argv[1][0] != '-';
}

static int take_positionals(struct collect_options *options, struct string_list *positionals,
			    bool perfcollect_form)
{
	size_t first_extra = perfcollect_form ? 1 : 0;

	if (perfcollect_form)
		options->trace_name = positionals->items[0];
	for (size_t i = first_extra; i < positionals->count; i++) {
		if (!perfcollect_form) {
			report_error("unexpected argument '%s' (see profcpu collect --help)",
				     positionals->items[i]);
			return -1;
		}
		report_warning("ignoring unknown argument '%s'", positionals->items[i]);
	}
	return 0;
}

/* Names for the JIT code of a .NET `target` (--names): its perf map and
 * jitdump, turned on through its diagnostics IPC; where that cannot name
 * it (auto) or when asked (memory), its runtime's memory, read as it is
 * sampled into *memory. Returns true when profcpu turned its perf map on. */
static bool start_naming(const struct collect_options *options, const struct target_process *target,
			 FILE *log, struct memory_perfmap **memory)
{
	char why[PATH_MAX + 128] = "", error[512];
	bool unnamed = true, switched = false;

	*memory = NULL;
	if (options->names == JIT_NAMES_PERFMAP)
		return dotnet_ensure_perfmap(target, log);
	if (options->names == JIT_NAMES_AUTO)
		switched = dotnet_ensure_perfmap_else(target, log, why, sizeof(why), &unnamed);
	if (!target->runs_dotnet)
		return switched;
	if (!unnamed) {
		/* auto, where the IPC turned both on: the runtime's memory names
		 * what its perf map and jitdump leave unnamed (stubs, code they
		 * did not list), the jitdump saying what they name as sampled
		 * (a perf map the target writes itself is not read then) */
		if (switched && (*memory = memory_perfmap_open(target, error, sizeof(error)))) {
			memory_perfmap_for_misses(*memory);
			fprintf(log, "JIT names: from the perf map and jitdump, and from the "
				     "runtime's memory for what they leave unnamed\n");
		}
		return switched;
	}
	*memory = memory_perfmap_open(target, error, sizeof(error));
	if (*memory) {
		fprintf(
		    stderr,
		    "profcpu: naming the JIT frames of .NET pid %d from its runtime's memory%s%s\n",
		    (int)target->pid, why[0] ? ": " : " (--names memory)", why);
		fprintf(log, "JIT names: from the runtime's memory, as sampled%s%s\n",
			why[0] ? "; the perf map route failed: " : " (--names memory)", why);
	} else if (why[0])
		report_warning("JIT frames of .NET pid %d are named only from the method rundown "
			       "of its runtime events (none with -nolttng): it writes no perf map "
			       "and %s; nor can its runtime's memory name them: %s",
			       (int)target->pid, why, error);
	else
		report_warning("--names memory: the JIT frames of .NET pid %d cannot be named "
			       "from its runtime's memory: %s",
			       (int)target->pid, error);
	return switched;
}

int cmd_collect(int argc, char **argv)
{
	enum options_result parsed;
	struct collect_options options = {.frequency = -1,
					  .buffer_pages = 256,
					  .call_graph = CALL_GRAPH_HYBRID,
					  .stack_size = CALL_GRAPH_DEFAULT_STACK_SIZE};
	struct string_list positionals = {0};
	const struct option entries[] = {
	    SCOPE_OPTION_ENTRIES(&options.scope),
	    {"enable-perfmaps", NULL, OPTION_FLAG, &options.enable_perfmaps},
	    {"no-perfmap-switch", NULL, OPTION_FLAG, &options.no_perfmap_switch},
	    {"names", NULL, OPTION_STRING, &options.names_text},
	    {"duration", "collectsec", OPTION_NUMBER, &options.duration},
	    {"frequency", "F", OPTION_INTEGER, &options.frequency},
	    {"output", "o", OPTION_STRING, &options.output_dir},
	    {"buffersize", NULL, OPTION_STRING, &options.buffer_size},
	    {"processfilter", NULL, OPTION_STRING, &options.process_filter},
	    {"hwevents", NULL, OPTION_FLAG, &options.hardware_events},
	    {"threadtime", NULL, OPTION_FLAG, &options.thread_time},
	    {"off-cpu", "offcpu", OPTION_FLAG, &options.off_cpu},
	    {"no-compress", NULL, OPTION_FLAG, &options.no_compress},
	    {"call-graph", "callgraph", OPTION_STRING, &options.call_graph_text},
	    {"stack-size", "stacksize", OPTION_INTEGER, &options.stack_size},
	    SYMBOL_OPTION_ENTRIES(&options.symbols),
	    GROUPING_OPTION_ENTRIES(&options.grouping),
	    EVENT_OPTION_ENTRIES(&options.events),
	    {"push", NULL, OPTION_STRING, &options.push_url},
	    {"push-interval", NULL, OPTION_NUMBER, &options.push_interval},
	    PUSH_OPTION_ENTRIES(&options.push),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	bool perfcollect_form = is_perfcollect_form(argc, argv);
	struct target_process target = {.root_fd = -1, .pidfd = -1};
	struct resolver_config config = {0};
	struct trace_zip zip = {0};
	struct fold_options fold;
	struct eventpipe_session *events = NULL;
	struct managed_images *images = NULL;
	struct native_symbols *native = NULL;
	char *dir = NULL, *log_path = NULL, *command_line = NULL, *zip_path = NULL, *cgroup = NULL;
	struct switched_perfmap *switched = NULL; /* the perf maps turned on, to turn off */
	size_t switched_count = 0;
	struct memory_perfmap *memory = NULL;
	struct memory_perfmaps *every_memory = NULL;
	bool keep_dir = true, pid_given;
	FILE *log = NULL;
	int status = 1;

	parsed =
	    options_parse(entries, argc, argv, &positionals,
			  perfcollect_form ? UNKNOWN_OPTIONS_WARN : UNKNOWN_OPTIONS_FAIL, usage);
	if (parsed != OPTIONS_PARSED) {
		string_list_clear(&positionals);
		return options_exit_status(parsed);
	}
	status = take_positionals(&options, &positionals, perfcollect_form);
	string_list_clear(&positionals);
	if (status < 0)
		return 2;
	if (options.frequency == -1) /* not given */
		options.frequency = perfcollect_form ? 1000 : 99;
	if (check_options(&options) < 0 || !grouping_options_apply(&options.grouping, &fold))
		return 2;
	pid_given = options.scope.pid != 0;
	if (options.scope.pid || options.process_filter) {
		if (!options.scope.pid &&
		    (options.scope.pid = target_process_find_by_name(options.process_filter)) < 0)
			return 1;
		if (target_process_open((pid_t)options.scope.pid, &target) < 0)
			return 1;
	} else if (open_sampling_scope(&options, &target, &cgroup, &fold) < 0)
		return 1;
	/* From here on a signal stops the sampling, never the writing. */
	stop_signals_install();

	status = 1;
	if (options.trace_name) {
		zip_path = xasprintf("%s.trace.zip", options.trace_name);
		zip.path = zip_path;
		zip.name = basename(options.trace_name); /* GNU basename: no modification */
		keep_dir = options.output_dir != NULL;
	}
	dir = options.output_dir   ? xstrdup(options.output_dir)
	      : options.trace_name ? make_temporary_dir(options.trace_name)
				   : default_output_dir();
	if (!dir)
		goto done;
	log_path = xasprintf("%s/profcpu.log", dir);
	if (make_directories(dir) < 0 || !(log = fopen(log_path, "we"))) {
		report_error("cannot write to the output folder %s: %s; choose another with -o DIR",
			     dir, strerror(errno));
		goto done;
	}
	report_also_to(log);
	command_line = options_command_line(argc, argv);
	fprintf(log, "command: %s\nprofcpu: %s\n", command_line, PROFCPU_VERSION);
	if (target.pid == TARGET_EVERY_PROCESS)
		fprintf(log, "scope: every process%s%s\n", target.cgroup ? " of cgroup " : "",
			target.cgroup ? target.cgroup : "");
	else
		fprintf(log, "pid: %d (%d in its namespace)\ncomm: %s\n", (int)target.pid,
			(int)target.namespace_pid, target.comm);
	log_environment(log, &target, &options);
	warn_about_perfcollect_options(&options, pid_given, log);
	if (options.events_wanted)
		events = collect_events_start(&target, &options.events_config, dir, log);
	if (options.events.no_samples) {
		status = collect_events_only(events, &target, options.duration, log) < 0 ? 1 : 0;
		collect_events_finish(events, dir, log, NULL);
		if (status == 0)
			status = write_events_only_outputs(dir, &zip, zip_path);
		goto done;
	}
	if (target.pid != TARGET_EVERY_PROCESS && options.no_perfmap_switch)
		fprintf(log, "perf map and jitdump: left as they are (--no-perfmap-switch)%s\n",
			events && options.events_config.rundown
			    ? "; JIT code they do not name is named from the method rundown"
			    : "");
	else if (target.pid != TARGET_EVERY_PROCESS) {
		if (start_naming(&options, &target, log, &memory)) {
			switched = xmalloc(sizeof(*switched));
			*switched = (struct switched_perfmap){
			    target.pid, target_process_start_ticks(target.pid)};
			switched_count = 1;
		}
	} else {
		if (options.enable_perfmaps)
			switched_count = sampling_scope_enable_perfmaps(&target, log, &switched);
		if (options.names != JIT_NAMES_PERFMAP) {
			every_memory = memory_perfmaps_new();
			fprintf(log, "JIT names: from each .NET 10+ process's runtime's memory, as "
				     "sampled, for what its perf map leaves unnamed\n");
		}
	}
	symbol_options_apply(&options.symbols, target.root_fd, log, &config.native);
	config.capture_dir = dir;
	config.native.write_kernel_symbols_copy = true;
	config.live_pid = target.pid == TARGET_EVERY_PROCESS ? 0 : target.pid;
	config.live_namespace_pid = target.namespace_pid;
	config.live_every_process = target.pid == TARGET_EVERY_PROCESS;
	if (options.push_url)
		push_options_add_target_labels(&options.push, target.pid, target.comm);
	/* One target's .NET images and ELF files, read once for the recording's
	 * walk and the replays; the ELF files only where the replay downloads
	 * nothing, as the recording must not. */
	if (target.pid != TARGET_EVERY_PROCESS) {
		images = config.managed_images = managed_images_new(target.root_fd);
		if (!native_symbols_downloads(&config.native))
			native = config.native_symbols = resolver_native_symbols_new(&config);
	}
	/* With --push-interval, one capture a period into the same folder, each
	 * pushed, until the duration, Ctrl-C or the target's exit. */
	for (double collected = 0; !collected || options.push_interval > 0;) {
		double period =
		    options.push_interval > 0 ? options.push_interval : options.duration;
		struct runtime_trace trace = {.status = -1};
		bool stopped_early = false, last;
		/* The target's jitdump, parsed once as it is copied, for the
		 * recording's walk and the replay. */
		struct jitdump *jitdump = target.pid != TARGET_EVERY_PROCESS ? jitdump_new() : NULL;

		if (options.push_interval > 0 && options.duration > 0 &&
		    options.duration - collected < period)
			period = options.duration - collected;
		if (capture_target(
			&(struct capture_options){.duration = period,
						  .frequency = (unsigned)options.frequency,
						  .buffer_pages = (unsigned)options.buffer_pages,
						  .call_graph = options.call_graph,
						  .stack_size = (unsigned)options.stack_size,
						  .compress = !options.no_compress,
						  .hardware_events = options.hardware_events,
						  .off_cpu = options.off_cpu || options.thread_time,
						  .command_line = command_line,
						  .stopped_early = &stopped_early,
						  .managed_images = images,
						  .native_symbols = native,
						  .jitdump = jitdump,
						  .memory_perfmap = memory,
						  .memory_perfmaps = every_memory},
			&target, dir, log) < 0) {
			collect_events_finish(events, dir, log, NULL);
			jitdump_free(jitdump);
			goto done;
		}
		collected += period > 0 ? period : 1;
		last = options.push_interval <= 0 || stopped_early ||
		       (options.duration > 0 && collected >= options.duration);
		/* The event session spans every period: its file and summary
		 * go with the last one's outputs, read once for both. */
		if (last)
			collect_events_finish(events, dir, log, &trace);
		config.jitdump =
		    (struct borrowed_jitdump){.pid = jitdump ? target.pid : 0, .jitdump = jitdump};
		status = write_outputs_and_push(&options, dir, &config, &zip, &fold, zip_path,
						last && events ? &trace : NULL, log);
		config.jitdump = (struct borrowed_jitdump){0};
		jitdump_free(jitdump);
		runtime_trace_release(&trace);
		if (last)
			break;
	}
done:
	/* However it ended: the target is left writing no more than it did. */
	if (switched_count)
		dotnet_turn_off_perfmaps(switched, switched_count, DOTNET_TURN_OFF_MS, true, log);
	free(switched);
	report_also_to(NULL);
	if (log)
		fclose(log);
	if (dir && !keep_dir)
		remove_flat_folder(dir);
	memory_perfmap_free(memory);
	memory_perfmaps_free(every_memory);
	managed_images_free(images);
	native_symbols_free(native);
	target_process_close(&target);
	symbol_options_release(&options.symbols);
	push_options_release(&options.push);
	free(command_line);
	free(cgroup);
	free(log_path);
	free(zip_path);
	free(dir);
	return status;
}
