/* profcpu watch: the flight recorder. Samples as collect does into a ring
 * of the last seconds and, when a rule fires, writes a capture of what led
 * up to it and what followed. */
#include "capture.h"
#include "commands.h"
#include "dotnet_diagnostics.h"
#include "grouping_options.h"
#include "jitdump.h"
#include "managed_images.h"
#include "push_options.h"
#include "scope_options.h"
#include "stop_signals.h"
#include "symbol_options.h"
#include "util.h"
#include "watch_capture.h"
#include "watch_cpu.h"
#include "watch_ring.h"
#include "watch_runtime.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: profcpu watch -pid PID [RULE...] [options]\n"
    "       profcpu watch -a | --cgroup PATH | --container ID [RULE...] [options]\n"
    "\n"
    "The flight recorder: samples as profcpu collect does (the same stacks and\n"
    "names) into a ring of the last --before seconds, and when a rule fires\n"
    "writes a capture of the seconds before and the --after seconds that\n"
    "follow into a folder of -o DIR named by its time and rule\n"
    "(2026-11-29_03-12-44_cpu), with every output collect writes: perf.data,\n"
    "folded_stacks.out, perf_script.out, flamegraph.svg, profile.pb.gz,\n"
    "speedscope.json, prof.trace.zip (PerfView), the target's perf map and\n"
    "jitdump, and for a .NET target the runtime's events of the window\n"
    "(runtime-N.nettrace, the exceptions and contention profiles). Each rule\n"
    "that fires says so in one line. Runs until Ctrl-C, SIGTERM or the\n"
    "target's exit (a capture under way is written from what was sampled),\n"
    "or after the first capture with --once.\n"
    "\n"
    "The ring is files of one second in DIR/.ring.* (removed at the end): its\n"
    "size is bounded by --before and --after and the sampling rate.\n"
    "\n"
    "rules (any of them; SIGUSR1 always triggers):\n"
    "  --cpu PERCENT         the target's CPU over the last second, in percent of\n"
    "                        one core (200: two cores), passes PERCENT; read from\n"
    "                        /proc (a cgroup's cpu.stat, the machine's /proc/stat)\n"
    "  --exceptions N        a .NET target threw N or more exceptions a second\n"
    "  --gc-pause MS         one GC of a .NET target paused it MS ms or longer\n"
    "  --contention MS       a .NET target's threads waited MS ms or more a second\n"
    "                        for locks (the .NET rules read the runtime's events\n"
    "                        through its diagnostics socket, a second or two late)\n"
    "  --threadpool-queue N  a .NET target's thread pool queue held N or more work\n"
    "                        items (the highest of the runtime's\n"
    "                        threadpool-queue-length counter, sent each second)\n"
    "  SIGUSR1               a manual trigger: kill -USR1 <profcpu's pid>\n"
    "\n"
    "options:\n"
    "  -pid PID              the process to watch\n"
    "  -a, --all-cpus        every process of the machine (needs root,\n"
    "                        CAP_PERFMON or kernel.perf_event_paranoid <= 0)\n"
    "  --cgroup PATH         every process of this cgroup directory\n"
    "  --container ID        the cgroup of this container (podman, docker)\n"
    "  --before SECONDS      kept before a trigger (default 30, at most 3600)\n"
    "  --after SECONDS       sampled after it (default 10, at most 3600)\n"
    "  -o, -output DIR       where captures go (default profilings)\n"
    "  --once                end after the first capture (scripts, tests)\n"
    "  --cooldown SECONDS    after a capture, rules are not heard for this long\n"
    "                        (default 60)\n"
    "  --max-captures N      at most N captures an hour (default 6, at most 60);\n"
    "                        a rule that fires past it is logged and skipped\n"
    "  --max-disk MIB        no new capture once this watch's captures take\n"
    "                        MIB mebibytes (default 2048)\n"
    "  -F, -frequency HZ     samples per second of CPU time (default 99)\n"
    "  --call-graph MODE     fp, dwarf or hybrid (default), as collect\n"
    "  --off-cpu             also record when threads leave the CPU, with their\n"
    "                        stacks, as collect --off-cpu: each capture has the\n"
    "                        off-CPU and wall outputs (offcpu_*, wall_*); ring\n"
    "                        buffers of 2048 pages\n" SYMBOL_OPTIONS_USAGE GROUPING_OPTIONS_USAGE
    "  --push URL            send each capture's profile.pb.gz to the Pyroscope\n"
    "                        server at URL, labelled as collect --push labels "
    "it\n" PUSH_OPTIONS_USAGE
    "  --otlp URL            also send each capture's samples as OpenTelemetry\n"
    "                        profiles (OTLP/HTTP, URL/v1development/profiles), as\n"
    "                        profcpu agent --otlp does, one request a capture; with\n"
    "                        the receiver's own credentials:\n" OTLP_TARGET_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu watch -pid 4711 --cpu 80 -o incidents/    # a capture each time it passes 80%\n"
    "    profcpu watch -pid 4711 --cpu 60 --before 10 --after 2 --once -o out/\n"
    "    profcpu watch -pid 4711 -o incidents/ & kill -USR1 $!  # capture now, with the last 30 s\n"
    "    profcpu watch --container web --cpu 150 --max-captures 2  # a container, two an hour\n"
    "    profcpu watch -pid 4711 --exceptions 100 --gc-pause 200 -o incidents/  # .NET\n"
    "    profcpu watch -pid 4711 --cpu 80 --push http://pyroscope:4040  # each capture to "
    "Pyroscope\n"
    "    profcpu watch -pid 4711 --cpu 80 --otlp http://otel-collector:4318  # OpenTelemetry\n";

/* A switch record carries a stack copy as a sample does: collect's
 * buffers for --off-cpu. */
enum { MAX_WINDOW = 3600, MAX_CAPTURES_AN_HOUR = 60, OFF_CPU_BUFFER_PAGES = 2048 };

#define NS_PER_SECOND 1000000000ull
/* A capture waits this long past its window for the runtime events' last
 * part (the session's cuts come a period late). */
#define RUNTIME_PART_WAIT (3 * NS_PER_SECOND)

struct watch_options {
	long frequency, max_captures;
	double before, after, cpu, cooldown, max_disk_mib;
	/* The .NET rules; 0: not asked. */
	double exceptions, gc_pause_ms, contention_ms, threadpool_queue;
	const char *output_dir, *call_graph_text;
	bool once, off_cpu;
	struct scope_options scope;
	enum call_graph_mode call_graph;
	struct symbol_options symbols;
	struct grouping_options grouping;
	const char *push_url;
	struct push_options push;
	const char *otlp_url;
	struct push_target_options otlp_credentials;
	struct push_target otlp; /* made from otlp_url */
};

static volatile sig_atomic_t manual_trigger;

static void request_capture(int signal_number)
{
	(void)signal_number;
	manual_trigger = 1;
}

/* The watch between its periods: the ring, the rules' state and the
 * capture waiting for its --after seconds. */
struct watch {
	const struct watch_options *options;
	struct watch_capture_writer *writer;
	char *ring_dir;
	struct watch_ring ring;
	struct watch_cpu cpu;
	struct watch_runtime *runtime; /* a .NET target's events; NULL: none */
	uint64_t period_start;
	unsigned period_number;
	char *current_period; /* the folder being written (NULL: the ring's own) */
	bool period_open;     /* being written, not in the ring yet */
	/* The capture under way: its trigger and what fired. */
	bool pending;
	uint64_t trigger;
	char rule[24], reason[160];
	uint64_t quiet_until; /* the cool-down */
	uint64_t hour_captures[MAX_CAPTURES_AN_HOUR];
	size_t hour_count;
	bool said_skipped; /* a rule was skipped since the last capture */
	unsigned captures;
	bool ended; /* --once: the capture is written */
};

/* Whether a capture may start at `now`: the cool-down, the hourly limit
 * and the disk; a skip is said once until the next capture. */
static bool capture_allowed(struct watch *watch, uint64_t now, const char *rule)
{
	const char *why = NULL;
	size_t kept = 0;

	for (size_t i = 0; i < watch->hour_count; i++)
		if (now - watch->hour_captures[i] < 3600 * NS_PER_SECOND)
			watch->hour_captures[kept++] = watch->hour_captures[i];
	watch->hour_count = kept;
	if (now < watch->quiet_until)
		return false; /* the cool-down is quiet */
	if ((long)watch->hour_count >= watch->options->max_captures)
		why = "--max-captures captures in the last hour";
	else if (watch_capture_disk_mib(watch->writer) >= watch->options->max_disk_mib)
		why = "this watch's captures fill --max-disk";
	if (why && !watch->said_skipped)
		fprintf(stderr, "profcpu: rule %s fired but no capture is taken: %s\n", rule, why);
	watch->said_skipped |= why != NULL;
	return why == NULL;
}

static void fire(struct watch *watch, uint64_t now, const char *rule, const char *reason)
{
	if (watch->pending || !capture_allowed(watch, now, rule))
		return;
	watch->pending = true;
	watch->trigger = now;
	snprintf(watch->rule, sizeof(watch->rule), "%s", rule);
	snprintf(watch->reason, sizeof(watch->reason), "%s", reason);
	if (watch->hour_count < sizeof(watch->hour_captures) / sizeof(*watch->hour_captures))
		watch->hour_captures[watch->hour_count++] = now;
	fprintf(stderr, "profcpu: rule %s fired: %s; capturing %g s before and %g s after\n", rule,
		reason, watch->options->before, watch->options->after);
}

/* Reads the counters and hears the rules; cheap enough for every sample
 * (the counters are read at most ten times a second). */
static void hear_rules(struct watch *watch)
{
	uint64_t now = clock_nanoseconds(CLOCK_MONOTONIC);
	double percent;

	if (manual_trigger) {
		manual_trigger = 0;
		fire(watch, now, "manual", "SIGUSR1");
	}
	if (watch->options->cpu > 0) {
		watch_cpu_read(&watch->cpu, now);
		if (watch_cpu_percent(&watch->cpu, &percent) && percent >= watch->options->cpu) {
			char reason[96];

			snprintf(reason, sizeof(reason),
				 "%.0f%% of one core over the last second (--cpu %g)", percent,
				 watch->options->cpu);
			fire(watch, now, "cpu", reason);
		}
	}
}

/* The .NET rules, on a period's runtime events (read a period after they
 * came). */
static void hear_runtime_rules(struct watch *watch, uint64_t now,
			       const struct watch_runtime_period *read)
{
	const struct watch_options *options = watch->options;
	double seconds = (double)(read->until - read->from) / 1e9;
	char reason[128];

	if (seconds <= 0)
		return;
	if (options->exceptions > 0 && (double)read->exceptions / seconds >= options->exceptions) {
		snprintf(reason, sizeof(reason),
			 "%.0f exceptions thrown a second (%llu in %.1f s; --exceptions %g)",
			 (double)read->exceptions / seconds, (unsigned long long)read->exceptions,
			 seconds, options->exceptions);
		fire(watch, now, "exceptions", reason);
	}
	if (options->gc_pause_ms > 0 && read->longest_gc_pause_ms >= options->gc_pause_ms) {
		snprintf(reason, sizeof(reason), "a GC paused the runtime %.1f ms (--gc-pause %g)",
			 read->longest_gc_pause_ms, options->gc_pause_ms);
		fire(watch, now, "gc-pause", reason);
	}
	if (options->contention_ms > 0 && read->contention_ms / seconds >= options->contention_ms) {
		snprintf(reason, sizeof(reason),
			 "%.0f ms a second waited for locks (%.0f ms in %.1f s; --contention %g)",
			 read->contention_ms / seconds, read->contention_ms, seconds,
			 options->contention_ms);
		fire(watch, now, "contention", reason);
	}
	if (options->threadpool_queue > 0 && read->has_threadpool_queue &&
	    read->threadpool_queue >= options->threadpool_queue) {
		snprintf(reason, sizeof(reason),
			 "the thread pool's queue held %.0f work items (--threadpool-queue %g)",
			 read->threadpool_queue, options->threadpool_queue);
		fire(watch, now, "threadpool-queue", reason);
	}
}

static void sampled(uint32_t pid, void *context)
{
	(void)pid;
	hear_rules(context);
}

/* Writes the capture under way from the ring; `cut_short` names why it
 * ends before its --after seconds. */
static void take_capture(struct watch *watch, const char *cut_short, bool wait)
{
	uint64_t from = watch->trigger - (uint64_t)(watch->options->before * NS_PER_SECOND);
	uint64_t to = watch->trigger + (uint64_t)(watch->options->after * NS_PER_SECOND);
	const struct watch_runtime_part *parts = NULL;
	size_t part_count = 0;

	if (watch->trigger < (uint64_t)(watch->options->before * NS_PER_SECOND))
		from = 0;
	if (watch->runtime)
		parts = watch_runtime_parts(watch->runtime, from, to, &part_count);
	watch_capture_write(watch->writer, &watch->ring,
			    &(struct watch_capture){.from = from,
						    .to = to,
						    .trigger = watch->trigger,
						    .rule = watch->rule,
						    .reason = watch->reason,
						    .cut_short = cut_short,
						    .runtime_parts = parts,
						    .runtime_part_count = part_count},
			    wait);
	watch->pending = false;
	watch->captures++;
	watch->said_skipped = false;
	watch->quiet_until = to + (uint64_t)(watch->options->cooldown * NS_PER_SECOND);
}

/* Whether the capture under way has its window, samples and the runtime's
 * events, at `now`. */
static bool capture_complete(const struct watch *watch, uint64_t now)
{
	uint64_t to = watch->trigger + (uint64_t)(watch->options->after * NS_PER_SECOND);

	return now >= to && (!watch->runtime || watch_runtime_kept_until(watch->runtime) >= to ||
			     now >= to + RUNTIME_PART_WAIT);
}

/* capture_options.next_period: one more second in the ring; a capture
 * whose --after seconds are over is written. */
static char *next_period(const char *finished_dir, void *context)
{
	struct watch *watch = context;
	uint64_t now = clock_nanoseconds(CLOCK_MONOTONIC), keep_from, kept;

	watch_ring_add(&watch->ring, finished_dir, watch->period_number > 0, watch->period_start,
		       now);
	watch->period_open = false;
	watch->period_start = now;
	hear_rules(watch);
	if (watch->runtime) {
		struct watch_runtime_period read;

		if (watch_runtime_next_period(watch->runtime, watch->period_number, 0, &read))
			hear_runtime_rules(watch, now, &read);
	}
	watch_capture_reap(watch->writer);
	if (watch->pending && capture_complete(watch, now)) {
		if (watch->options->once) {
			watch->ended = true; /* written once sampling has stopped */
			return NULL;
		}
		take_capture(watch, NULL, false);
	}
	/* What the capture under way, or the next one, may need. */
	keep_from = watch->pending ? watch->trigger : now;
	kept = (uint64_t)((watch->options->before + 1) * NS_PER_SECOND);
	watch_ring_drop_before(&watch->ring, keep_from > kept ? keep_from - kept : 0);
	if (watch->runtime)
		watch_runtime_drop_before(watch->runtime, keep_from > kept ? keep_from - kept : 0);
	free(watch->current_period);
	watch->current_period = xasprintf("%s/%06u", watch->ring_dir, ++watch->period_number);
	if (mkdir(watch->current_period, 0700) < 0) {
		report_error("cannot make %s: %s", watch->current_period, strerror(errno));
		return NULL;
	}
	watch->period_open = true;
	return xstrdup(watch->current_period);
}

static int check_options(struct watch_options *options)
{
	if (!options->scope.pid && !options->scope.every_process && !options->scope.cgroup &&
	    !options->scope.container_id) {
		report_error("watch needs what to watch: profcpu watch -pid PID, or -a, --cgroup "
			     "PATH, --container ID");
		return -1;
	}
	if (scope_options_check_pid(&options->scope) < 0)
		return -1;
	if (options->before <= 0 || options->before > MAX_WINDOW || options->after < 0 ||
	    options->after > MAX_WINDOW) {
		report_error("invalid --before %g or --after %g: give seconds, --before more than "
			     "0, both at most %d",
			     options->before, options->after, MAX_WINDOW);
		return -1;
	}
	if (options->cpu < 0 || options->cooldown < 0 || options->max_disk_mib <= 0 ||
	    options->exceptions < 0 || options->gc_pause_ms < 0 || options->contention_ms < 0 ||
	    options->threadpool_queue < 0) {
		report_error("invalid --cpu, --exceptions, --gc-pause, --contention, "
			     "--threadpool-queue, --cooldown or --max-disk: give positive numbers");
		return -1;
	}
	if (options->max_captures < 1 || options->max_captures > MAX_CAPTURES_AN_HOUR) {
		report_error("invalid --max-captures %ld: give 1 to %d captures an hour",
			     options->max_captures, MAX_CAPTURES_AN_HOUR);
		return -1;
	}
	if (options->frequency < 1 || options->frequency > 100000) {
		report_error("invalid -frequency %ld: give 1 to 100000 samples per second",
			     options->frequency);
		return -1;
	}
	if (options->call_graph_text &&
	    !call_graph_parse(options->call_graph_text, &options->call_graph)) {
		report_error("invalid --call-graph %s: give fp, dwarf or hybrid",
			     options->call_graph_text);
		return -1;
	}
	if (!options->otlp_url &&
	    (options->otlp_credentials.user || options->otlp_credentials.password_file ||
	     options->otlp_credentials.password_env || options->otlp_credentials.token_file ||
	     options->otlp_credentials.headers.count)) {
		report_error("--otlp-header, --otlp-bearer-token-file and --otlp-basic-auth-* are "
			     "the --otlp receiver's: give --otlp URL");
		return -1;
	}
	if (options->otlp_url &&
	    push_target_make(options->otlp_url, &options->otlp_credentials, &options->otlp) < 0)
		return -1;
	return options->push_url ? push_options_prepare(&options->push, options->push_url) : 0;
}

static int open_target(struct watch_options *options, struct target_process *target, char **cgroup,
		       struct fold_options *fold)
{
	if (options->scope.pid)
		return target_process_open((pid_t)options->scope.pid, target);
	return scope_options_open_every_process(&options->scope, &options->grouping, target, cgroup,
						fold);
}

/* The --cpu rule needs a counter it can read. */
static int check_cpu_counter(const struct watch_options *options,
			     const struct target_process *target)
{
	uint64_t time;

	if (options->cpu > 0 && !watch_cpu_time(target, &time)) {
		report_error("--cpu cannot read the CPU time of %s (%s)",
			     target->cgroup ? target->cgroup : "the target",
			     target->cgroup ? "no cpu.stat: cgroup v2 has one" : strerror(errno));
		return -1;
	}
	return 0;
}

static bool wants_runtime_rules(const struct watch_options *options)
{
	return options->exceptions > 0 || options->gc_pause_ms > 0 || options->contention_ms > 0 ||
	       options->threadpool_queue > 0;
}

/* Whether the runtime's events of `target` can be recorded: it is one .NET
 * process with a diagnostics socket. Returns -1 after one line when a .NET
 * rule was asked and cannot be heard; without those rules a target
 * without the socket is only said. */
static int check_runtime_events(const struct watch_options *options,
				const struct target_process *target, bool *recorded)
{
	bool wanted = wants_runtime_rules(options);
	const char *rule = options->exceptions > 0	? "--exceptions"
			   : options->gc_pause_ms > 0	? "--gc-pause"
			   : options->contention_ms > 0 ? "--contention"
							: "--threadpool-queue";
	int socket;

	*recorded = false;
	if (target->pid == TARGET_EVERY_PROCESS) {
		if (wanted)
			report_error("%s watches one .NET process: give -pid PID", rule);
		return wanted ? -1 : 0;
	}
	if (!target_process_runs_dotnet(target->pid)) {
		if (wanted)
			report_error("%s needs a .NET process: pid %d (%s) runs no .NET runtime",
				     rule, (int)target->pid, target->comm);
		return wanted ? -1 : 0;
	}
	if ((socket = dotnet_open_diagnostic_socket(target)) < 0) {
		if (wanted) {
			report_error("%s needs the runtime's events, and pid %d has no diagnostics "
				     "socket (started with DOTNET_EnableDiagnostics=0?)",
				     rule, (int)target->pid);
			return -1;
		}
		report_warning("pid %d has no diagnostics socket (started with "
			       "DOTNET_EnableDiagnostics=0?): its captures hold no runtime events",
			       (int)target->pid);
		return 0;
	}
	close(socket);
	*recorded = true;
	return 0;
}

/* Samples until the end, then writes the capture still under way. */
static int watch_target(struct watch *watch, const struct target_process *target,
			struct capture_options *capture, FILE *log)
{
	const char *cut_short;
	bool stopped_early = false;

	capture->stopped_early = &stopped_early;
	watch->cpu.target = target;
	watch->period_start = clock_nanoseconds(CLOCK_MONOTONIC);
	if (capture_target(capture, target, watch->ring_dir, log) < 0)
		return 1;
	/* The last period, when capture_target finished it. */
	if (watch->period_open)
		watch_ring_add(&watch->ring,
			       watch->current_period ? watch->current_period : watch->ring_dir,
			       watch->period_number > 0, watch->period_start,
			       clock_nanoseconds(CLOCK_MONOTONIC));
	cut_short = watch->ended ? NULL
		    : stop_signals_requested()
			? stop_signals_name()
			: "the end of sampling (the target's exit or a write error)";
	if (watch->pending && watch->runtime && !watch->ended) {
		struct watch_runtime_period read;

		/* The events of the period under way, the target's exit included. */
		watch_runtime_next_period(watch->runtime, watch->period_number, 2, &read);
	}
	if (watch->pending)
		take_capture(watch, cut_short, true);
	watch_capture_reap_all(watch->writer);
	if (!watch->captures)
		fprintf(stderr, "profcpu: no rule fired: nothing was captured\n");
	return watch->options->once && !watch->captures ? 1 : 0;
}

int cmd_watch(int argc, char **argv)
{
	struct watch_options options = {.frequency = 99,
					.before = 30,
					.after = 10,
					.cooldown = 60,
					.max_captures = 6,
					.max_disk_mib = 2048,
					.output_dir = "profilings",
					.call_graph = CALL_GRAPH_HYBRID,
					.otlp_credentials = {.option_prefix = "otlp-"}};
	const struct option entries[] = {
	    SCOPE_OPTION_ENTRIES(&options.scope),
	    {"before", NULL, OPTION_NUMBER, &options.before},
	    {"after", NULL, OPTION_NUMBER, &options.after},
	    {"output", "o", OPTION_STRING, &options.output_dir},
	    {"once", NULL, OPTION_FLAG, &options.once},
	    {"off-cpu", "offcpu", OPTION_FLAG, &options.off_cpu},
	    {"cooldown", NULL, OPTION_NUMBER, &options.cooldown},
	    {"max-captures", NULL, OPTION_INTEGER, &options.max_captures},
	    {"max-disk", NULL, OPTION_NUMBER, &options.max_disk_mib},
	    {"cpu", NULL, OPTION_NUMBER, &options.cpu},
	    {"exceptions", NULL, OPTION_NUMBER, &options.exceptions},
	    {"gc-pause", NULL, OPTION_NUMBER, &options.gc_pause_ms},
	    {"contention", NULL, OPTION_NUMBER, &options.contention_ms},
	    {"threadpool-queue", NULL, OPTION_NUMBER, &options.threadpool_queue},
	    {"frequency", "F", OPTION_INTEGER, &options.frequency},
	    {"call-graph", "callgraph", OPTION_STRING, &options.call_graph_text},
	    SYMBOL_OPTION_ENTRIES(&options.symbols),
	    GROUPING_OPTION_ENTRIES(&options.grouping),
	    {"push", NULL, OPTION_STRING, &options.push_url},
	    PUSH_OPTION_ENTRIES(&options.push),
	    {"otlp", NULL, OPTION_STRING, &options.otlp_url},
	    OTLP_TARGET_OPTION_ENTRIES(&options.otlp_credentials),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct string_list positionals = {0};
	struct target_process target = {.root_fd = -1, .pidfd = -1};
	struct resolver_config config = {0};
	struct fold_options fold;
	struct watch watch = {.options = &options, .period_open = true};
	struct jitdump *jitdump = NULL;
	struct native_symbols *native = NULL;
	char *cgroup = NULL, *command_line = NULL, *template = NULL, *log_path = NULL;
	FILE *log = NULL;
	int status = 1;
	bool runtime_events;
	enum options_result parsed =
	    options_parse(entries, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);

	if (parsed == OPTIONS_PARSED && positionals.count) {
		report_error("unexpected argument '%s' (see profcpu watch --help)",
			     positionals.items[0]);
		parsed = OPTIONS_INVALID;
	}
	string_list_clear(&positionals);
	if (parsed != OPTIONS_PARSED)
		return options_exit_status(parsed);
	if (check_options(&options) < 0 || !grouping_options_apply(&options.grouping, &fold)) {
		push_options_release(&options.push);
		push_target_release(&options.otlp);
		string_list_clear(&options.otlp_credentials.headers);
		return 2;
	}
	if (open_target(&options, &target, &cgroup, &fold) < 0 ||
	    check_cpu_counter(&options, &target) < 0 ||
	    check_runtime_events(&options, &target, &runtime_events) < 0)
		goto done;
	template = xasprintf("%s/.ring.XXXXXX", options.output_dir);
	if (mkdir(options.output_dir, 0755) < 0 && errno != EEXIST) {
		report_error("cannot make the output folder %s: %s", options.output_dir,
			     strerror(errno));
		goto done;
	}
	if (!(watch.ring_dir = mkdtemp(template))) {
		report_error("cannot write to the output folder %s: %s; choose another with -o DIR",
			     options.output_dir, strerror(errno));
		goto done;
	}
	template = NULL;
	log_path = xasprintf("%s/watch.log", options.output_dir);
	if (!(log = fopen(log_path, "ae"))) {
		report_error("cannot write %s: %s", log_path, strerror(errno));
		goto done;
	}
	command_line = options_command_line(argc, argv);
	stop_signals_install();
	signal(SIGUSR1, request_capture);
	if (target.pid != TARGET_EVERY_PROCESS)
		dotnet_ensure_perfmap(&target, log);
	if (runtime_events) {
		char *runtime_log = xasprintf("%s/watch-runtime.log", options.output_dir);

		watch.runtime = watch_runtime_start(&target, watch.ring_dir, runtime_log,
						    options.threadpool_queue > 0);
		free(runtime_log);
		if (!watch.runtime && wants_runtime_rules(&options))
			goto done;
	}
	symbol_options_apply(&options.symbols, target.root_fd, log, &config.native);
	config.live_pid = target.pid == TARGET_EVERY_PROCESS ? 0 : target.pid;
	config.live_namespace_pid = target.namespace_pid;
	config.live_every_process = target.pid == TARGET_EVERY_PROCESS;
	if (target.pid != TARGET_EVERY_PROCESS) {
		config.managed_images = managed_images_new(target.root_fd);
		/* For the recording's walk only: each capture's replay reads
		 * them for itself and copies the kernel's symbols into its
		 * folder. */
		if (!native_symbols_downloads(&config.native))
			native = resolver_native_symbols_new(&config);
		jitdump = jitdump_new();
		config.jitdump = (struct borrowed_jitdump){.pid = target.pid, .jitdump = jitdump};
	}
	config.native.write_kernel_symbols_copy = true;
	if (options.push_url)
		push_options_add_target_labels(&options.push, target.pid, target.comm);
	watch.writer =
	    watch_capture_writer_new(options.output_dir, watch.ring_dir, command_line, &target,
				     &config, &fold, options.push_url ? &options.push : NULL);
	if (options.otlp_url)
		watch_capture_writer_otlp(watch.writer, &options.otlp,
					  options.push.timeout > 0 ? options.push.timeout : 30,
					  options.push.app_name);
	fprintf(stderr,
		"profcpu: watching; captures go to %s (SIGUSR1 takes one now: kill -USR1 %d)\n",
		options.output_dir, (int)getpid());
	status = watch_target(
	    &watch, &target,
	    &(struct capture_options){.frequency = (unsigned)options.frequency,
				      .buffer_pages = options.off_cpu ? OFF_CPU_BUFFER_PAGES : 256,
				      .off_cpu = options.off_cpu,
				      .call_graph = options.call_graph,
				      .stack_size = CALL_GRAPH_DEFAULT_STACK_SIZE,
				      .compress = true,
				      .command_line = command_line,
				      .managed_images = config.managed_images,
				      .native_symbols = config.native_symbols,
				      .jitdump = jitdump,
				      .period = 1,
				      .next_period = next_period,
				      .period_context = &watch,
				      .period_ended = &watch.ended,
				      .sampled = sampled},
	    log);
	watch_capture_writer_free(watch.writer);
done:
	watch_runtime_stop(watch.runtime);
	if (log)
		fclose(log);
	watch_ring_release(&watch.ring);
	if (watch.ring_dir)
		remove_flat_folder(watch.ring_dir);
	managed_images_free(config.managed_images);
	native_symbols_free(native);
	jitdump_free(jitdump);
	target_process_close(&target);
	symbol_options_release(&options.symbols);
	push_options_release(&options.push);
	push_target_release(&options.otlp);
	string_list_clear(&options.otlp_credentials.headers);
	free(watch.current_period);
	free(watch.ring_dir);
	free(template);
	free(log_path);
	free(command_line);
	free(cgroup);
	return status;
}
