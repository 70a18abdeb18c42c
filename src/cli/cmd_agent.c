/* profcpu agent: every process of the node, sampled without a pause, one
 * profile per process and period pushed to Pyroscope. */
#include "agent_selection.h"
#include "agent_spool.h"
#include "agent_worker.h"
#include "capture.h"
#include "commands.h"
#include "event_options.h"
#include "options.h"
#include "push_options.h"
#include "sampling_scope.h"
#include "stop_signals.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: profcpu agent --push URL [--otlp URL] [options]\n"
    "       profcpu agent --otlp URL [options]\n"
    "\n"
    "Samples every process of the node (this PID namespace: run it with the\n"
    "host's, as a DaemonSet with hostPID) until SIGTERM or Ctrl-C, and every\n"
    "period pushes one pprof profile per workload that ran (a series) to the\n"
    "Pyroscope server (or Grafana Alloy's pyroscope.receive_http) at URL,\n"
    "labelled as Pyroscope's agents label them: service_name, namespace, pod,\n"
    "container, node; each sample carries its pid, process and thread.\n"
    "Sampling goes on while a child process encodes and sends a period.\n"
    "JIT frames of .NET processes are named from the perf map they are asked\n"
    "once, through their diagnostics socket, to write (and to stop writing\n"
    "when the agent stops: see docs/AGENT.md), and where that socket does\n"
    "not answer, from their runtime's memory (.NET 10 and later; --names).\n"
    "They are asked to send their runtime events: their lock contention and\n"
    "exceptions (and allocations where asked) are pushed as profiles of\n"
    "their own.\n"
    "A receiver that is down or slow costs nothing but the buffer: periods\n"
    "wait in the spool folder, the oldest dropped past --buffer-periods.\n"
    "Needs CAP_PERFMON (or root) and CAP_SYS_PTRACE.\n"
    "\n"
    "options:\n"
    "  --push URL            the Pyroscope receiver\n"
    "  --otlp URL            also, or instead, each period's profiles as OTLP/HTTP\n"
    "                        profiles (alpha) to URL/v1development/profiles (an\n"
    "                        OpenTelemetry Collector), with credentials of its own\n"
    "                        (--otlp-*, below); periods wait in the spool while it\n"
    "                        is down, as for --push\n"
    "  --push-interval SECS  the period (default 15, as Pyroscope's eBPF agent)\n"
    "  -F, -frequency HZ     samples per second of CPU time (default 49)\n"
    "  --call-graph MODE     hybrid (default: whole stacks), fp or dwarf (see\n"
    "                        docs/AGENT.md)\n"
    "  --spool DIR           where periods wait: a folder of the agent's user,\n"
    "                        writable by no other (default $STATE_DIRECTORY/spool,\n"
    "                        else /var/lib/profcpu/spool as root, else\n"
    "                        /tmp/profcpu-agent-UID)\n"
    "  --buffer-periods N    periods kept while a receiver takes none (default 40)\n"
    "  --node NAME           the node label (default $NODE_NAME, else the hostname)\n"
    "  --label KEY=VALUE     a label of every profile (repeatable)\n"
    "  --namespace NAME      profile only the pods of namespace NAME (a name or a\n"
    "                        glob; repeatable, as the five below); the processes\n"
    "                        left out are neither walked nor named\n"
    "  --pod NAME            profile only the pod NAME\n"
    "  --container ID        profile only the container ID (12 to 64 hex digits,\n"
    "                        also containerd://ID as kubectl shows it) or NAME\n"
    "                        (as its runtime names it: istio-proxy), or a glob\n"
    "  --exclude-namespace NAME  leave out the pods of namespace NAME\n"
    "  --exclude-pod NAME    leave out the pod NAME\n"
    "  --exclude-container ID  leave out the container ID\n"
    "  --trust-container-labels  let --namespace and --pod take a process whose\n"
    "                        namespace or pod was read from files inside its\n"
    "                        container (which it can write) for want of its\n"
    "                        container runtime's state (see docs/AGENT.md)\n"
    "  --container-state DIR  a folder where the container runtime keeps each\n"
    "                        container's OCI config, as DIR/ID/config.json or\n"
    "                        DIR/ID/userdata/config.json (repeatable): looked in\n"
    "                        before containerd's, k3s', CRI-O's and podman's own\n"
    "  --push-timeout SECS   give up a push when the receiver is silent for SECS\n"
    "                        (default 10)\n"
    "  --events LIST         the runtime events of .NET processes made profiles\n"
    "                        (default contention,exceptions): contention (lock),\n"
    "                        exceptions (exception), alloc (memory: allocation\n"
    "                        ticks), allocsampled (memory: .NET 10's samples),\n"
    "                        waits (wait: .NET 9's waits on wait handles), as\n"
    "                        collect's -events\n"
    "  --no-events           no runtime events: CPU profiles only\n"
    "  --names ROUTE         where JIT frames of .NET processes get their names:\n"
    "                        auto (default: the perf map and jitdump turned on\n"
    "                        through the diagnostics socket, the runtime's memory\n"
    "                        naming what they leave unnamed; where the socket\n"
    "                        does not answer, the runtime's memory, .NET 10+),\n"
    "                        memory (the runtime's memory only: nothing written\n"
    "                        in the processes), perfmap (the perf map only)\n"
    "\n"
    "the --push receiver's API and credentials (never sent to the --otlp one):\n" PUSH_TARGET_USAGE
    "\n"
    "the --otlp receiver's credentials (never sent to the --push one):\n" OTLP_TARGET_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu agent --push http://pyroscope:4040          # until SIGTERM\n"
    "    profcpu agent --push http://alloy:9999 --label cluster=prod\n"
    "    profcpu agent --push http://pyroscope:4040 -F 97 --push-interval 10\n"
    "    profcpu agent --push https://profiles-prod-001.grafana.net --basic-auth-user 123456 \\\n"
    "        --basic-auth-password-file /run/secrets/grafana/token   # Grafana Cloud\n"
    "    profcpu agent --push http://pyroscope:4040 --tenant team-a  # multi-tenant\n"
    "    profcpu agent --push http://pyroscope:4040 --namespace 'shop-*' --exclude-pod 'debug-*'\n"
    "    profcpu agent --otlp http://otel-collector:4318    # OpenTelemetry profiles\n"
    "    profcpu agent --push http://pyroscope:4040 --otlp https://otlp.example:4318 \\\n"
    "        --otlp-bearer-token-file /run/secrets/otlp/token  # each with its own credentials\n"
    "    profcpu agent --push http://pyroscope:4040 --events contention,exceptions,alloc\n"
    "    profcpu agent --push http://pyroscope:4040 --names perfmap  # the perf map route\n";

/* The runtime events the agent asks by default: those whose profiles
 * collect makes by default (allocation ticks cost more: asked for). */
#define DEFAULT_RUNTIME_EVENTS "contention,exceptions"

/* Ring buffer pages per CPU: at the default rate a CPU fills a few KB a
 * second with frame-pointer stacks, where 64 pages is room for seconds;
 * with a stack copy in each sample (hybrid, dwarf: 16 KiB) 784 KiB a
 * second, which collect's 256 pages hold between the sampler's reads. */
enum {
	DEFAULT_FREQUENCY = 49,
	DEFAULT_BUFFER_PERIODS = 40,
	FRAME_POINTER_BUFFER_PAGES = 64,
	STACK_COPY_BUFFER_PAGES = 256,
};

/* The spool, the worker, and the folder of the period being sampled. */
struct agent_run {
	struct agent_spool spool;
	struct agent_worker worker;
	char *current;
};

static char *next_period(const char *finished_dir, void *context)
{
	struct agent_run *run = context;
	char *next = agent_spool_new_period(&run->spool);

	agent_worker_period_done(&run->worker, finished_dir, next);
	free(run->current);
	run->current = next;
	return next ? xstrdup(next) : NULL;
}

static void sampled(uint32_t pid, void *context)
{
	struct agent_run *run = context;

	agent_worker_note_sample(&run->worker, pid);
}

/* $NODE_NAME (the DaemonSet sets it from spec.nodeName), else the
 * hostname: in a hostNetwork pod or on the host, the node's. */
static char *node_name(const char *given)
{
	const char *variable = getenv("NODE_NAME");
	char host[256] = "";

	if (given)
		return xstrdup(given);
	if (variable && *variable)
		return xstrdup(variable);
	gethostname(host, sizeof(host) - 1);
	return xstrdup(host[0] ? host : "unknown");
}

/* Whether any of `credentials` was given. */
static bool given_credentials(const struct push_target_options *credentials)
{
	return credentials->api || credentials->user || credentials->password_file ||
	       credentials->password_env || credentials->token_file || credentials->tenant ||
	       credentials->headers.count;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_send_options send = {.timeout = 10};
	char *default_spool = NULL;
	struct agent_run run = {0};
	struct push_target_options credentials = {0}, otlp_credentials = {.option_prefix = "otlp-"};
	struct push_target receiver = {0}, otlp = {0};
	const char *otlp_url = NULL;
	struct agent_selection selection = {0};
	const char *url = NULL;
	long frequency = DEFAULT_FREQUENCY, buffer_periods = DEFAULT_BUFFER_PERIODS;
	double interval = 15;
	const char *node = NULL, *call_graph_text = "hybrid", *names = "auto";
	enum call_graph_mode call_graph;
	struct string_list positionals = {0};
	struct event_options events = {0};
	struct eventpipe_config runtime_events;
	int events_wanted;
	const struct option entries[] = {
	    {"push", NULL, OPTION_STRING, &url},
	    {"otlp", NULL, OPTION_STRING, &otlp_url},
	    {"push-interval", NULL, OPTION_NUMBER, &interval},
	    {"frequency", "F", OPTION_INTEGER, &frequency},
	    {"call-graph", "callgraph", OPTION_STRING, &call_graph_text},
	    {"spool", NULL, OPTION_STRING, &send.spool_dir},
	    {"buffer-periods", NULL, OPTION_INTEGER, &buffer_periods},
	    {"node", NULL, OPTION_STRING, &node},
	    {"label", NULL, OPTION_STRING_LIST, &send.labels},
	    {"namespace", NULL, OPTION_STRING_LIST, &selection.namespaces},
	    {"pod", NULL, OPTION_STRING_LIST, &selection.pods},
	    {"container", NULL, OPTION_STRING_LIST, &selection.containers},
	    {"exclude-namespace", NULL, OPTION_STRING_LIST, &selection.exclude_namespaces},
	    {"exclude-pod", NULL, OPTION_STRING_LIST, &selection.exclude_pods},
	    {"exclude-container", NULL, OPTION_STRING_LIST, &selection.exclude_containers},
	    {"trust-container-labels", NULL, OPTION_FLAG, &selection.trust_container_labels},
	    {"container-state", NULL, OPTION_STRING_LIST, &selection.state_folders},
	    {"push-timeout", NULL, OPTION_NUMBER, &send.timeout},
	    {"events", NULL, OPTION_STRING, &events.events},
	    {"no-events", "noevents", OPTION_FLAG, &events.no_events},
	    {"names", NULL, OPTION_STRING, &names},
	    PUSH_TARGET_OPTION_ENTRIES(&credentials),
	    OTLP_TARGET_OPTION_ENTRIES(&otlp_credentials),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct target_process target;
	int status;
	enum options_result parsed =
	    options_parse(entries, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);

	if (parsed != OPTIONS_PARSED || positionals.count) {
		if (parsed == OPTIONS_PARSED)
			report_error("unexpected argument '%s' (see profcpu agent --help)",
				     positionals.items[0]);
		status = parsed == OPTIONS_PARSED ? 2 : options_exit_status(parsed);
		goto done;
	}
	status = 2;
	if ((!url && !otlp_url) || interval < 1 || frequency < 1 || frequency > 10000 ||
	    buffer_periods < 1 || send.timeout <= 0 ||
	    !call_graph_parse(call_graph_text, &call_graph)) {
		report_error("agent needs --push URL or --otlp URL, --push-interval of 1 s or "
			     "more, -F from 1 to "
			     "10000, --buffer-periods of 1 or more, --call-graph fp, dwarf or "
			     "hybrid (see profcpu agent --help)");
		goto done;
	}
	if (!jit_names_parse(names, &send.names)) {
		report_error("invalid --names %s: give perfmap, memory or auto", names);
		goto done;
	}
	if (!url && given_credentials(&credentials)) {
		report_error(
		    "the API and credentials without otlp- in their names are the --push "
		    "receiver's: give --push URL, or --otlp-header, --otlp-bearer-token-file, "
		    "--otlp-basic-auth-user for --otlp's");
		goto done;
	}
	if (!otlp_url && given_credentials(&otlp_credentials)) {
		report_error("--otlp-header, --otlp-bearer-token-file and --otlp-basic-auth-* are "
			     "the --otlp receiver's: give --otlp URL");
		goto done;
	}
	if (!events.events && !events.no_events)
		events.events = DEFAULT_RUNTIME_EVENTS;
	events_wanted = event_options_config(&events, &runtime_events);
	if (events_wanted < 0)
		goto done;
	/* The runtime's memory, or the perf map the agent turns on, names the
	 * frames: no rundown, which would cost each period's cut the runtime's
	 * whole list of methods. */
	runtime_events.rundown = false;
	if ((url && push_target_make(url, &credentials, &receiver) < 0) ||
	    (otlp_url && push_target_make(otlp_url, &otlp_credentials, &otlp) < 0))
		goto done;
	status = 1;
	send.target = url ? &receiver : NULL;
	send.otlp = otlp_url ? &otlp : NULL;
	send.selection = &selection;
	agent_selection_report_unmatched(&selection);
	send.runtime_events = events_wanted > 0 ? &runtime_events : NULL;
	if (!send.spool_dir)
		send.spool_dir = default_spool = agent_spool_default_dir();
	send.max_periods = (size_t)buffer_periods;
	send.period = interval;
	send.node = node_name(node);
	run.spool.dir = send.spool_dir;
	if (sampling_scope_open(NULL, &target) < 0 || agent_spool_make(&run.spool) < 0 ||
	    !(run.current = agent_spool_new_period(&run.spool)) ||
	    agent_worker_start(&run.worker, &send, run.current) < 0)
		goto done;
	stop_signals_install();
	/* A worker that died is started again, a receiver that hung up is an
	 * error: neither stops the agent. */
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr,
		"profcpu: agent on node %s: every %g s, one profile per workload to %s%s%s\n",
		send.node, interval, url ? receiver.url : otlp.url,
		url && otlp_url ? ", OTLP to " : "", url && otlp_url ? otlp.url : "");
	status = capture_target(
		     &(struct capture_options){.frequency = (unsigned)frequency,
					       .buffer_pages = call_graph == CALL_GRAPH_FP
								   ? FRAME_POINTER_BUFFER_PAGES
								   : STACK_COPY_BUFFER_PAGES,
					       .call_graph = call_graph,
					       .stack_size = CALL_GRAPH_DEFAULT_STACK_SIZE,
					       .command_line = "profcpu agent",
					       .period = interval,
					       .next_period = next_period,
					       .period_context = &run,
					       .sampled = sampled},
		     &target, run.current, stderr) == 0
		     ? 0
		     : 1;
	/* The last period, cut short by the stop, is sent too. */
	if (run.current)
		agent_worker_period_done(&run.worker, run.current, NULL);
	agent_worker_finish(&run.worker);
done:
	free(run.current);
	string_list_clear(&positionals);
	string_list_clear(&send.labels);
	string_list_clear(&credentials.headers);
	string_list_clear(&otlp_credentials.headers);
	push_target_release(&receiver);
	push_target_release(&otlp);
	agent_selection_release(&selection);
	free((char *)send.node);
	free(default_spool);
	return status;
}
