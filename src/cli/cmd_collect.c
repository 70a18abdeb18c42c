/* profcpu collect: sample a running process, then write every output. */
#include "capture.h"
#include "commands.h"
#include "dotnet_diagnostics.h"
#include "grouping_options.h"
#include "postprocess.h"
#include "stop_signals.h"
#include "symbol_options.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
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
    "       profcpu collect NAME -pid PID [-collectsec SECONDS] [options]\n"
    "\n"
    "Samples every thread of PID (also threads started later) with the\n"
    "cpu-clock event and frame-pointer call stacks, then writes into one\n"
    "folder: perf.data, folded_stacks.out, perf_script.out, flamegraph.svg,\n"
    "prof.tar.gz, prof.trace.zip (perfcollect's layout, for PerfView) and a\n"
    "copy of the target's perf map and jitdump. Stops after the duration, on\n"
    "Ctrl-C, SIGTERM, SIGHUP or SIGPIPE, or when the target exits, and writes\n"
    "every output from what was collected (a second Ctrl-C aborts).\n"
    "\n"
    "The second form is perfcollect's: it writes ./NAME.trace.zip, samples at\n"
    "1000 Hz as perfcollect does, keeps no folder unless -o is given, and only\n"
    "warns about options it does not know.\n"
    "\n"
    "JIT and ReadyToRun frames of .NET are named from its perf map and jitdump:\n"
    "a .NET 8+ target is asked to write both whole; older ones need\n"
    "DOTNET_PerfMapEnabled=1 at start (and name no ReadyToRun code).\n"
    "\n"
    "options:\n"
    "  -pid PID              the process to sample\n"
    "  -processfilter NAME   without -pid: the one process named NAME\n"
    "  -duration, -collectsec SECONDS\n"
    "                        how long to sample (default: until Ctrl-C)\n"
    "  -F, -frequency HZ     samples per second of CPU time (default 99;\n"
    "                        1000 in perfcollect's form)\n"
    "  -o, -output DIR       output folder (default profilings/HH-MM-SS_YYYY-MM-DD)\n"
    "  -buffersize SIZE      ring buffer per CPU: pages, or bytes with a B, K, M or\n"
    "                        G suffix (100M); rounded up to a power of two of\n"
    "                        pages (default 256 pages)\n"
    "  -hwevents             sample CPU cycles; cpu-clock where the CPU has no PMU\n"
    "  -threadtime, -offcpu  accepted; scheduler events are not recorded (a warning)\n"
    "  -nolttng              accepted; profcpu records no LTTng events anyway\n"
    "  -no-compress          write perf.data records without zstd\n" SYMBOL_OPTIONS_USAGE
	GROUPING_OPTIONS_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu collect -pid 1 -duration 30           # PID 1 for 30 seconds\n"
    "    profcpu collect -pid 4711 -duration 10 -o out/  # into the folder out/\n"
    "    profcpu collect -pid 4711 -F 999               # finer sampling until Ctrl-C\n"
    "    profcpu collect sample -pid 1 -collectsec 30   # ./sample.trace.zip for PerfView\n"
    "    profcpu collect sample -processfilter dotnet   # the one dotnet process, until Ctrl-C\n";

enum { MAX_DURATION = 365 * 24 * 3600 };

struct collect_options {
	long pid, frequency, buffer_pages;
	double duration;
	const char *output_dir, *buffer_size, *process_filter;
	const char *trace_name; /* perfcollect's form: collect NAME */
	bool no_compress, hardware_events, thread_time, off_cpu, no_lttng;
	struct symbol_options symbols;
	struct grouping_options grouping;
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

static char *join_arguments(int argc, char **argv)
{
	size_t length = strlen("profcpu") + 1;
	char *line;

	for (int i = 0; i < argc; i++)
		length += strlen(argv[i]) + 1;
	line = xmalloc(length);
	strcpy(line, "profcpu");
	for (int i = 0; i < argc; i++) {
		strcat(line, " ");
		strcat(line, argv[i]);
	}
	return line;
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

static int check_options(struct collect_options *options)
{
	if (options->pid == 0 && !options->process_filter) {
		report_error("collect needs the process to sample: profcpu collect -pid PID "
			     "(profcpu samples one process, not the whole system)");
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
	if (options->pid < 0 || options->pid > INT_MAX) {
		report_error("invalid -pid %ld: give a process id", options->pid);
		return -1;
	}
	if (options->buffer_size && parse_buffer_size(options->buffer_size, &options->buffer_pages))
		return -1;
	return 0;
}

/* perfcollect options profcpu accepts without doing what perfcollect does:
 * say so once, rather than pretend. */
static void warn_about_perfcollect_options(const struct collect_options *options)
{
	if (options->thread_time)
		report_warning("-threadtime: scheduler events (sched_switch, sched_stat_sleep, "
			       "sched_process_exit) are not recorded; the trace holds on-CPU "
			       "samples only, so PerfView shows no blocked time");
	if (options->off_cpu)
		report_warning("-offcpu: off-CPU time (scheduler events) is not recorded; "
			       "recording on-CPU samples instead");
	if (options->process_filter && options->pid)
		report_warning("-processfilter %s is ignored: -pid %ld names the process",
			       options->process_filter, options->pid);
}

/* What a reader of the trace needs to know about this machine and target:
 * perfcollect's log holds the same. */
static void log_environment(FILE *log, const struct target_process *target,
			    const struct collect_options *options)
{
	static const char *const variables[] = {"DOTNET_PerfMapEnabled", "COMPlus_PerfMapEnabled",
						"DOTNET_PerfMapJitDumpPath"};
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
	for (size_t i = 0; i < sizeof(variables) / sizeof(*variables); i++) {
		char *value = target_process_environment_value(target->pid, variables[i]);

		fprintf(log, "target %s: %s\n", variables[i], value ? value : "(not set)");
		free(value);
	}
	fprintf(log, "lttng: not recorded (%s)\n",
		options->no_lttng ? "-nolttng" : "profcpu records no LTTng events");
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

/* Removes the flat capture folder this run made. */
static void remove_capture_dir(const char *dir)
{
	DIR *directory = opendir(dir);
	struct dirent *entry;

	while (directory && (entry = readdir(directory)))
		if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
			unlinkat(dirfd(directory), entry->d_name, 0);
	if (directory)
		closedir(directory);
	rmdir(dir);
}

/* perfcollect's form starts with the trace NAME: collect NAME -pid N. */
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

int cmd_collect(int argc, char **argv)
{
	struct collect_options options = {.frequency = -1, .buffer_pages = 256};
	struct string_list positionals = {0};
	const struct option entries[] = {
	    {"pid", "p", OPTION_INTEGER, &options.pid},
	    {"duration", "collectsec", OPTION_NUMBER, &options.duration},
	    {"frequency", "F", OPTION_INTEGER, &options.frequency},
	    {"output", "o", OPTION_STRING, &options.output_dir},
	    {"buffersize", NULL, OPTION_STRING, &options.buffer_size},
	    {"processfilter", NULL, OPTION_STRING, &options.process_filter},
	    {"hwevents", NULL, OPTION_FLAG, &options.hardware_events},
	    {"threadtime", NULL, OPTION_FLAG, &options.thread_time},
	    {"offcpu", NULL, OPTION_FLAG, &options.off_cpu},
	    {"nolttng", NULL, OPTION_FLAG, &options.no_lttng},
	    {"no-compress", NULL, OPTION_FLAG, &options.no_compress},
	    SYMBOL_OPTION_ENTRIES(&options.symbols),
	    GROUPING_OPTION_ENTRIES(&options.grouping),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	bool perfcollect_form = is_perfcollect_form(argc, argv);
	struct target_process target = {.root_fd = -1, .pidfd = -1};
	struct resolver_config config = {0};
	struct trace_zip zip = {0};
	struct fold_options fold;
	char *dir = NULL, *log_path = NULL, *command_line = NULL, *zip_path = NULL;
	char *flamegraph_path = NULL;
	bool keep_dir = true;
	FILE *log = NULL;
	int status = 1;

	switch (options_parse(entries, argc, argv, &positionals,
			      perfcollect_form ? UNKNOWN_OPTIONS_WARN : UNKNOWN_OPTIONS_FAIL,
			      usage)) {
	case OPTIONS_INVALID:
		return 2;
	case OPTIONS_HELP_SHOWN:
		string_list_clear(&positionals);
		return 0;
	case OPTIONS_PARSED:
		break;
	}
	status = take_positionals(&options, &positionals, perfcollect_form);
	string_list_clear(&positionals);
	if (status < 0)
		return 2;
	if (options.frequency == -1) /* not given */
		options.frequency = perfcollect_form ? 1000 : 99;
	if (check_options(&options) < 0 || !grouping_options_apply(&options.grouping, &fold))
		return 2;
	if (!options.pid && (options.pid = target_process_find_by_name(options.process_filter)) < 0)
		return 1;
	if (target_process_open((pid_t)options.pid, &target) < 0)
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
	command_line = join_arguments(argc, argv);
	fprintf(log, "command: %s\nprofcpu: %s\npid: %d (%d in its namespace)\ncomm: %s\n",
		command_line, PROFCPU_VERSION, (int)target.pid, (int)target.namespace_pid,
		target.comm);
	log_environment(log, &target, &options);
	warn_about_perfcollect_options(&options);
	dotnet_ensure_perfmap(&target, log);
	if (capture_target(&(struct capture_options){.duration = options.duration,
						     .frequency = (unsigned)options.frequency,
						     .buffer_pages = (unsigned)options.buffer_pages,
						     .compress = !options.no_compress,
						     .hardware_events = options.hardware_events,
						     .command_line = command_line},
			   &target, dir, log) < 0)
		goto done;

	symbol_options_apply(&options.symbols, target.root_fd, log, &config.native);
	config.capture_dir = dir;
	config.live_pid = target.pid;
	config.live_namespace_pid = target.namespace_pid;
	config.live_root_fd = target.root_fd;
	fflush(log);
	status = postprocess_capture(dir, &config, &zip, &fold) == 0 ? 0 : 1;
	flamegraph_path = outputs_flamegraph_path(dir);
	if (status == 0 && zip_path)
		printf("profcpu: trace saved to %s%s\n", zip_path,
		       flamegraph_path ? " (flamegraph.svg inside)" : "");
	else if (status == 0)
		outputs_print_where(dir);
done:
	report_also_to(NULL);
	if (log)
		fclose(log);
	if (dir && !keep_dir)
		remove_capture_dir(dir);
	target_process_close(&target);
	symbol_options_release(&options.symbols);
	free(command_line);
	free(log_path);
	free(zip_path);
	free(flamegraph_path);
	free(dir);
	return status;
}
