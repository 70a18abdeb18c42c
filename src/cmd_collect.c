/* profcpu collect: sample a running process, then write every output. */
#include "commands.h"
#include "dotnet_diagnostics.h"
#include "perf_data.h"
#include "postprocess.h"
#include "record.h"
#include "symbol_options.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: profcpu collect -pid PID [-duration SECONDS] [options]\n"
    "\n"
    "Samples every thread of PID (also threads started later) with the\n"
    "cpu-clock event and frame-pointer call stacks, then writes into one\n"
    "folder: perf.data, folded_stacks.out, perf_script.out, flamegraph.svg,\n"
    "prof.tar.gz and a copy of the target's perf map. Stops after the\n"
    "duration, on Ctrl-C or SIGTERM, or when the target exits.\n"
    "\n"
    "Start .NET targets with DOTNET_PerfMapEnabled=1 so JIT frames are named.\n"
    "\n"
    "options:\n"
    "  -pid PID              the process to sample\n"
    "  -duration SECONDS     how long to sample (default: until Ctrl-C)\n"
    "  -F, -frequency HZ     samples per second of CPU time (default 99)\n"
    "  -o, -output DIR       output folder (default profilings/HH-MM-SS_YYYY-MM-DD)\n"
    "  -buffersize PAGES     ring buffer pages per CPU, a power of two (default 256)\n"
    "  -no-compress          write perf.data records without zstd\n" SYMBOL_OPTIONS_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu collect -pid 1 -duration 30           # PID 1 for 30 seconds\n"
    "    profcpu collect -pid 4711 -duration 10 -o out/  # into the folder out/\n"
    "    profcpu collect -pid 4711 -F 999               # finer sampling until Ctrl-C\n";

struct collect_options {
	long pid, frequency, buffer_pages;
	double duration;
	const char *output_dir;
	bool no_compress, help;
	struct symbol_options symbols;
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

struct writer_sink {
	struct perf_data_writer *writer;
	int error;
};

static int write_record(const struct perf_event_header *record, void *context)
{
	struct writer_sink *sink = context;

	if (perf_data_writer_add(sink->writer, record) < 0) {
		sink->error = errno;
		return -1;
	}
	return 0;
}

static const char *stop_reason_text(enum record_stop_reason reason)
{
	switch (reason) {
	case RECORD_STOPPED_BY_DURATION:
		return "the duration ended";
	case RECORD_STOPPED_BY_SIGNAL:
		return "interrupted";
	case RECORD_STOPPED_BY_TARGET_EXIT:
		return "the target exited";
	case RECORD_STOPPED_BY_WRITE_ERROR:
		return "writing perf.data failed";
	}
	return "";
}

static void log_summary(FILE *log, const struct record_summary *summary)
{
	fprintf(log,
		"samples: %llu\nlost samples: %llu\nthreads: %u\nseconds: %.1f\n"
		"kernel frames: %s\nstopped: %s\n",
		(unsigned long long)summary->samples, (unsigned long long)summary->lost_samples,
		summary->threads_seen, summary->elapsed_seconds,
		summary->kernel_frames ? "yes" : "no (refused by the kernel)",
		stop_reason_text(summary->stop_reason));
}

/* An idle target is often an init process (tini, sh) whose child is the
 * real service: name the children so the user can pick one. */
static void suggest_busy_children(const struct target_process *target)
{
	struct child_process *children;
	size_t count = target_process_children(target->pid, &children);

	for (size_t i = 0; i < count && i < 5; i++)
		fprintf(stderr,
			"profcpu: pid %d (%s) used no CPU; its child pid %d (%s) may be the one "
			"to profile: profcpu collect -pid %d\n",
			(int)target->pid, target->comm, (int)children[i].pid, children[i].comm,
			(int)children[i].pid);
	free(children);
}

/* Records the target into DIR/perf.data. Returns 0, or -1 after printing
 * why nothing could be recorded. */
static int record_capture(const struct collect_options *options,
			  const struct target_process *target, const char *dir, FILE *log,
			  const char *command_line)
{
	struct record_options record_options = {
	    .duration = options->duration,
	    .frequency = (unsigned)options->frequency,
	    .show_progress = isatty(STDERR_FILENO),
	};
	struct perf_event_attr attr;
	struct record_session *session;
	struct record_summary summary;
	struct perf_data_info info;
	struct writer_sink sink = {0};
	char *path = xasprintf("%s/perf.data", dir);

	record_default_attr(&attr, (unsigned)options->frequency);
	session = record_open(target, &attr, (unsigned)options->buffer_pages);
	if (!session) {
		free(path);
		return -1;
	}
	/* The writer fills in the machine's details itself. */
	info = (struct perf_data_info){.event_name = "cpu-clock", .command_line = command_line};
	sink.writer = perf_data_writer_create(path, &attr, &info, !options->no_compress);
	if (!sink.writer) {
		report_error("cannot write %s: %s", path, strerror(errno));
		record_close(session);
		free(path);
		return -1;
	}
	fprintf(stderr, "profcpu: sampling pid %d (%s) at %ld Hz%s\n", (int)target->pid,
		target->comm, options->frequency, options->duration > 0 ? "" : "; Ctrl-C stops");
	record_run(session, &record_options, write_record, &sink, &summary);
	record_close(session);
	if (perf_data_writer_finish(sink.writer) < 0 && !sink.error)
		sink.error = errno;
	log_summary(log, &summary);
	fprintf(stderr,
		"profcpu: %llu samples from %u thread%s in %.1f s, %llu lost; stopped: %s\n",
		(unsigned long long)summary.samples, summary.threads_seen,
		summary.threads_seen == 1 ? "" : "s", summary.elapsed_seconds,
		(unsigned long long)summary.lost_samples, stop_reason_text(summary.stop_reason));
	if (summary.samples == 0)
		suggest_busy_children(target);
	if (summary.lost_samples)
		report_warning("%llu samples were lost: the ring buffer overflowed; raise "
			       "-buffersize or lower -F",
			       (unsigned long long)summary.lost_samples);
	if (sink.error)
		report_error("writing %s failed: %s; kept what was written before", path,
			     strerror(sink.error));
	free(path);
	return 0;
}

static int check_options(const struct collect_options *options)
{
	if (options->pid == 0) {
		report_error("collect needs the process to sample: profcpu collect -pid PID");
		return -1;
	}
	if (options->frequency < 1 || options->frequency > 100000) {
		report_error("invalid -frequency %ld: give 1 to 100000 samples per second",
			     options->frequency);
		return -1;
	}
	if (options->duration < 0) {
		report_error("invalid -duration %g: give seconds, or 0 for until Ctrl-C",
			     options->duration);
		return -1;
	}
	if (options->buffer_pages < 1 || options->buffer_pages > (1 << 20) ||
	    (options->buffer_pages & (options->buffer_pages - 1))) {
		report_error("invalid -buffersize %ld: give a power of two of pages, e.g. 256",
			     options->buffer_pages);
		return -1;
	}
	return 0;
}

int cmd_collect(int argc, char **argv)
{
	struct collect_options options = {.frequency = 99, .buffer_pages = 256};
	struct string_list positionals = {0};
	const struct option entries[] = {
	    {"pid", "p", OPTION_INTEGER, &options.pid},
	    {"duration", NULL, OPTION_NUMBER, &options.duration},
	    {"frequency", "F", OPTION_INTEGER, &options.frequency},
	    {"output", "o", OPTION_STRING, &options.output_dir},
	    {"buffersize", NULL, OPTION_INTEGER, &options.buffer_pages},
	    {"no-compress", NULL, OPTION_FLAG, &options.no_compress},
	    {"help", "h", OPTION_FLAG, &options.help},
	    SYMBOL_OPTION_ENTRIES(&options.symbols),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct target_process target;
	struct resolver_config config = {0};
	char *dir = NULL, *log_path = NULL, *command_line = NULL;
	FILE *log = NULL;
	int status = 1;

	if (options_parse(entries, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL) < 0)
		return 2;
	if (options.help) {
		fputs(usage, stdout);
		return 0;
	}
	if (positionals.count) {
		report_error("unexpected argument '%s' (see profcpu collect --help)",
			     positionals.items[0]);
		string_list_clear(&positionals);
		return 2;
	}
	if (check_options(&options) < 0)
		return 2;
	if (target_process_open((pid_t)options.pid, &target) < 0)
		return 1;

	dir = options.output_dir ? xstrdup(options.output_dir) : default_output_dir();
	log_path = xasprintf("%s/profcpu.log", dir);
	if (make_directories(dir) < 0 || !(log = fopen(log_path, "we"))) {
		report_error("cannot write to the output folder %s: %s; choose another with -o DIR",
			     dir, strerror(errno));
		goto done;
	}
	command_line = join_arguments(argc, argv);
	fprintf(log, "command: %s\nprofcpu: %s\npid: %d (%d in its namespace)\ncomm: %s\n",
		command_line, PROFCPU_VERSION, (int)target.pid, (int)target.namespace_pid,
		target.comm);
	dotnet_ensure_perfmap(&target, log);
	if (record_capture(&options, &target, dir, log, command_line) < 0)
		goto done;

	symbol_options_apply(&options.symbols, target.root_fd, log, &config.native);
	config.capture_dir = dir;
	config.live_pid = target.pid;
	config.live_namespace_pid = target.namespace_pid;
	config.live_root_fd = target.root_fd;
	fflush(log);
	status = postprocess_capture(dir, &config) == 0 ? 0 : 1;
done:
	if (log)
		fclose(log);
	target_process_close(&target);
	symbol_options_release(&options.symbols);
	free(command_line);
	free(log_path);
	free(dir);
	return status;
}
