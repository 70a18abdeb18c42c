#include "agent_send.h"
#include "agent_kept.h"
#include "agent_series.h"
#include "agent_runtime_profiles.h"
#include "http_client.h"
#include "otlp_profiles.h"
#include "process_profiles.h"
#include "pyroscope_push.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* agent.log starts again past this: the worker lives as long as the agent. */
#define MAX_LOG_BYTES (1L << 20)
/* How long a period's push waits for its runtime events' sessions to be
 * cut (agent_runtime_sessions.h): a process whose socket stalls costs its
 * runtime profiles of the period, not the push. At most half a period:
 * the worker asks the next period's cuts only after this one's push, and
 * cuts asked together give the periods between them no events (others'
 * runtime profiles would miss a period beside a stopped process). */
#define RUNTIME_CUT_SECONDS 5

static double runtime_cut_seconds(const struct agent_sender *sender)
{
	double half_period = sender->options->period / 2;

	return half_period > 0 && half_period < RUNTIME_CUT_SECONDS ? half_period
								    : RUNTIME_CUT_SECONDS;
}

/* Returns as pyroscope_push_profile; `span` may be NULL. Every push goes
 * on the sender's one connection, kept open while the receiver keeps it. */
static enum push_result push(struct agent_sender *sender, const unsigned char *data, size_t size,
			     const struct pprof_span *span, const struct agent_labels *labels,
			     char *why, size_t why_size)
{
	const struct agent_send_options *options = sender->options;

	return pyroscope_push_profile(data, size,
				      &(struct push_request){.target = options->target,
							     .app_name = labels->service,
							     .profile_name = labels->profile_name,
							     .labels = labels->labels.items,
							     .label_count = labels->labels.count,
							     .timeout = options->timeout,
							     .tries = 1,
							     .span = span,
							     .keep = &sender->connection},
				      why, why_size);
}

/* A period's profile of one series, to push. */
struct series_profile {
	size_t number; /* of the series in its period */
	unsigned char *data;
	size_t size;
	struct pprof_span span;
};

/* Said once when the receiver stops taking profiles, once when it takes
 * them again. */
static void receiver_failed(struct agent_sender *sender, const char *why)
{
	if (!sender->receiver_down)
		fprintf(stderr,
			"profcpu: cannot push to %s: %s; keeping up to %zu periods in %s until it "
			"takes them\n",
			sender->options->target->url, why, sender->options->max_periods,
			sender->options->spool_dir);
	sender->receiver_down = true;
}

static void receiver_took(struct agent_sender *sender)
{
	if (sender->receiver_down)
		fprintf(stderr, "profcpu: %s takes profiles again\n", sender->options->target->url);
	sender->receiver_down = false;
}

/* Pushes one profile, or keeps it in `dir` once this round found the
 * receiver unable (`*stopped`). */
static void send_profile(struct agent_sender *sender, const char *dir,
			 const struct series_profile *profile, const struct agent_labels *labels,
			 bool *stopped)
{
	char why[512] = "";
	enum push_result status;

	if (!*stopped) {
		/* A runtime profile's span is read from it. */
		status = push(sender, profile->data, profile->size,
			      profile->span.time_nanos ? &profile->span : NULL, labels, why,
			      sizeof(why));
		if (status == PUSH_SENT) {
			receiver_took(sender);
			return;
		}
		if (status == PUSH_REFUSED) {
			report_error("the receiver refused the profile of %s: %s", labels->service,
				     why);
			return;
		}
		if (status == PUSH_UNREADABLE) {
			report_error("the profile of %s made here cannot be pushed: %s; it is "
				     "dropped",
				     labels->service, why);
			return;
		}
		receiver_failed(sender, why);
		*stopped = true;
	}
	agent_kept_write(dir, profile->number, profile->data, profile->size, labels);
}

/* Unix time minus CLOCK_MONOTONIC's, the clock of the samples and of the
 * runtime's events. */
static int64_t wall_clock_offset_now(void)
{
	return (int64_t)(clock_nanoseconds(CLOCK_REALTIME) - clock_nanoseconds(CLOCK_MONOTONIC));
}

/* The worker's CPU time so far, in seconds. */
static double cpu_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* The OTLP resource of process `index` of the period (OTLP_NO_SAMPLES:
 * none), its strings malloc'd (free_resources). */
static struct otlp_process otlp_resource(size_t index, pid_t pid, const char *executable,
					 const struct agent_labels *labels,
					 const struct agent_process *process)
{
	return (struct otlp_process){.index = index,
				     .pid = pid,
				     .executable = executable,
				     .service = xstrdup(labels->service),
				     .namespace = xstrdup(process->labels.namespace),
				     .pod = xstrdup(process->labels.pod),
				     .container = xstrdup(process->labels.container)};
}

/* The period's processes into series, each process's labels read; and
 * each process's OTLP resource (malloc'd strings) when `resources`. */
static void group_series(struct agent_sender *sender, const struct agent_period *period,
			 const struct process_profiles *profiles, struct agent_series_list *list,
			 struct otlp_process *resources)
{
	for (size_t i = 0; i < profiles->count; i++) {
		const struct process_profile *profile = &profiles->processes[i];
		struct agent_process *process =
		    agent_processes_of_profile(&sender->processes, profile, period->number);
		struct agent_labels labels;

		agent_labels_make(sender->options->node, &sender->options->labels, profile, process,
				  &labels);
		if (resources)
			resources[i] =
			    otlp_resource(i, profile->pid, profile->process_name, &labels, process);
		agent_series_add(list, i, &labels);
	}
}

static void free_resources(struct otlp_process *resources, size_t count)
{
	for (size_t i = 0; resources && i < count; i++) {
		free((char *)resources[i].service);
		free((char *)resources[i].namespace);
		free((char *)resources[i].pod);
		free((char *)resources[i].container);
	}
	free(resources);
}

/* Sends a period's OTLP request (`size` bytes of `body`, `source` naming
 * it) to the OpenTelemetry receiver. True when that is done with: sent,
 * or refused (said); false when the receiver cannot take it now (said
 * once, until it takes requests again): it is to be kept. */
static bool send_otlp(struct agent_sender *sender, const unsigned char *body, size_t size,
		      const char *source)
{
	const struct push_target *otlp = sender->options->otlp;
	char why[512] = "";
	enum push_result result = otlp_profiles_send(otlp, body, size, sender->options->timeout,
						     &sender->otlp_connection, why, sizeof(why));

	if (result == PUSH_SENT || result == PUSH_REFUSED) {
		if (sender->otlp_down)
			fprintf(stderr, "profcpu: %s takes OTLP profiles again\n", otlp->url);
		sender->otlp_down = false;
		if (result == PUSH_REFUSED)
			report_error("the OTLP receiver refused the profiles of %s: %s", source,
				     why);
		return true;
	}
	if (!sender->otlp_down)
		fprintf(stderr,
			"profcpu: cannot export OTLP profiles to %s: %s; keeping up to %zu periods "
			"in %s until it takes them\n",
			otlp->url, why, sender->options->max_periods, sender->options->spool_dir);
	sender->otlp_down = true;
	return false;
}

/* The period's processes to the OpenTelemetry receiver, in one request;
 * kept in the period's folder when the receiver cannot take it now, or
 * once this round found it unable (`*otlp_stopped`). */
static void export_otlp(struct agent_sender *sender, const struct agent_period *period,
			const struct process_profiles *profiles,
			const struct otlp_process *resources, size_t count, bool *otlp_stopped)
{
	size_t size;
	unsigned char *body = otlp_profiles_encode(profiles, resources, count, &size);

	if (!*otlp_stopped)
		*otlp_stopped = !send_otlp(sender, body, size, period->dir);
	if (*otlp_stopped)
		agent_kept_write_otlp(period->dir, body, size);
	free(body);
}

/* What the replay asks of a process: whether the selection takes it. */
struct selection_context {
	struct agent_sender *sender;
	unsigned long period;
};

static bool takes_process(uint32_t pid, void *context)
{
	struct selection_context *selection = context;

	return agent_processes_selected(&selection->sender->processes, (pid_t)pid,
					selection->period, selection->sender->options->selection);
}

/* The labels of the process of a runtime part, as its CPU profile's
 * (agent_labels_make), and its entry: the newest seen with its pid (it may have
 * had no CPU sample in the period). */
static struct agent_process *labels_of_part(struct agent_sender *sender,
					    const struct agent_runtime_part *part,
					    unsigned long period, struct agent_labels *labels)
{
	struct agent_process *found = NULL;
	struct process_profile named = {.pid = part->pid};

	for (size_t i = 0; i < sender->processes.count; i++)
		if (sender->processes.items[i].pid == part->pid)
			found = &sender->processes.items[i];
	if (!found)
		found = agent_processes_note(&sender->processes, part->pid, period);
	memcpy(named.process_name, part->comm, sizeof(named.process_name));
	make_printable(named.process_name);
	agent_labels_make(sender->options->node, &sender->options->labels, &named, found, labels);
	return found;
}

/* Each kind of runtime events that has some, a profile of its own,
 * pushed (or kept in the period's folder, numbered from `*number`) with
 * the labels of its process's series. */
static void send_runtime_profiles(struct agent_sender *sender, const struct agent_period *period,
				  const struct agent_runtime_period *runtimes, size_t count,
				  int64_t wall_clock_offset, size_t *number, bool *stopped)
{
	for (size_t i = 0; i < count; i++) {
		const struct agent_runtime_part *part = &runtimes[i].part;

		for (int kind = 0; runtimes[i].read && kind < RUNTIME_STACK_KINDS; kind++) {
			struct series_profile profile = {.number = (*number)++};
			struct agent_labels labels;

			if (!runtimes[i].profiles[kind].profile.sample_count)
				continue;
			profile.data = agent_runtime_profile_encode(
			    &runtimes[i].profiles[kind], (enum runtime_stack_kind)kind,
			    wall_clock_offset, &profile.size);
			if (!profile.data) {
				report_error("cannot encode a runtime profile of pid %d: out of "
					     "memory",
					     (int)part->pid);
				continue;
			}
			labels_of_part(sender, part, period->number, &labels);
			labels.profile_name =
			    xstrdup(agent_runtime_profile_name((enum runtime_stack_kind)kind));
			send_profile(sender, period->dir, &profile, &labels, stopped);
			agent_labels_free(&labels);
			free(profile.data);
		}
	}
}

/* Gives each OTLP resource the runtime profiles of its process, and a
 * resource of its own (after the `*count` there are) to a process that had
 * none: no CPU sample in the period (it waited). */
static void add_runtime_resources(struct agent_sender *sender, const struct agent_period *period,
				  const struct process_profiles *profiles,
				  struct otlp_process *resources, size_t *count,
				  const struct agent_runtime_period *runtimes, size_t runtime_count)
{
	for (size_t i = 0; i < runtime_count; i++) {
		const struct agent_runtime_part *part = &runtimes[i].part;
		size_t j = 0;
		struct agent_process *process;
		struct agent_labels labels;

		while (j < profiles->count && (profiles->processes[j].pid != part->pid ||
					       !profiles->processes[j].last_of_pid))
			j++;
		if (!agent_runtime_period_has_events(&runtimes[i]))
			continue;
		if (j < profiles->count) {
			resources[j].runtime = runtimes[i].profiles;
			continue;
		}
		process = labels_of_part(sender, part, period->number, &labels);
		resources[*count] =
		    otlp_resource(OTLP_NO_SAMPLES, part->pid, part->comm, &labels, process);
		resources[(*count)++].runtime = runtimes[i].profiles;
		agent_labels_free(&labels);
	}
}

/* The period's perf.data into one profile per series, pushed or kept in
 * its folder; and its runtime events' profiles. `*stopped`,
 * `*otlp_stopped`: this round found Pyroscope's, OpenTelemetry's receiver
 * unable. */
static void encode_period(struct agent_sender *sender, const struct agent_period *period,
			  bool *stopped, bool *otlp_stopped)
{
	char *perf_data = xasprintf("%s/perf.data", period->dir);
	char *reading = xasprintf("%s/" AGENT_SPOOL_READING, period->dir);
	struct process_profiles profiles;
	struct agent_series_list list = {0};
	struct otlp_process *resources = NULL;
	struct agent_runtime_period *runtimes = NULL;
	bool read = false;
	size_t samples = 0, runtime_count = 0, resource_count = 0;
	double start = cpu_seconds(), made = start, encoding = 0;

	if (!sender->resolver)
		sender->resolver = resolver_new(&sender->config);
	else
		resolver_next_capture(sender->resolver);
	agent_processes_ask_runtimes(&sender->processes, sender->resolver,
				     sender->options->selection, sender->runtime_sessions,
				     sender->log);
	agent_memory_names_start_period(&sender->memory_names, sender->options->period);
	if (rename(perf_data, reading) == 0)
		read =
		    process_profiles_read(
			reading, sender->resolver,
			agent_selection_narrows(sender->options->selection) ? takes_process : NULL,
			&(struct selection_context){sender, period->number}, &profiles) == 0;
	/* Without the period's samples (its perf.data could not be read), the
	 * runtime events are dated by the clocks as they read now. */
	if (!read)
		profiles = (struct process_profiles){.wall_clock_offset = wall_clock_offset_now()};
	/* Its runtime events are exported without its samples too. */
	if (sender->options->otlp)
		resources = xcalloc(profiles.count + 1, sizeof(*resources));
	if (read) {
		group_series(sender, period, &profiles, &list, resources);
		resource_count = resources ? profiles.count : 0;
		made = cpu_seconds();
	}
	for (size_t i = 0; sender->options->target && i < list.count; i++) {
		struct series_profile profile = {.number = i};
		double before = cpu_seconds();

		if (process_profiles_encode(&profiles, list.items[i].members,
					    list.items[i].member_count, &profile.data,
					    &profile.size, &profile.span) < 0) {
			report_error("cannot encode the profile of %s: out of memory",
				     list.items[i].labels.service);
			continue;
		}
		encoding += cpu_seconds() - before;
		send_profile(sender, period->dir, &profile, &list.items[i].labels, stopped);
		free(profile.data);
	}
	/* After the CPU pushes: the runtime events' sessions may keep them
	 * waiting (agent_runtime_sessions_take). */
	if (sender->runtime_sessions)
		runtimes = agent_runtime_periods_read(sender->runtime_sessions, period->number,
						      runtime_cut_seconds(sender), sender->resolver,
						      sender->log, &runtime_count);
	if (resources) {
		resources =
		    xrealloc(resources, (resource_count + runtime_count + 1) * sizeof(*resources));
		add_runtime_resources(sender, period, &profiles, resources, &resource_count,
				      runtimes, runtime_count);
		if (resource_count)
			export_otlp(sender, period, &profiles, resources, resource_count,
				    otlp_stopped);
	}
	if (sender->options->target) {
		size_t number = list.count;

		send_runtime_profiles(sender, period, runtimes, runtime_count,
				      profiles.wall_clock_offset, &number, stopped);
	}
	agent_runtime_periods_release(runtimes, runtime_count);
	agent_memory_names_report(&sender->memory_names, sender->log);
	for (size_t i = 0; read && i < profiles.count; i++)
		samples += profiles.processes[i].samples;
	fprintf(sender->log,
		"%s: %zu samples of %zu processes in %zu series named and encoded in %.1f ms of "
		"CPU, sent in %.1f ms\n",
		period->dir, samples, read ? profiles.count : 0, list.count,
		1000 * (made - start + encoding), 1000 * (cpu_seconds() - made - encoding));
	fflush(sender->log);
	agent_series_free(&list);
	free_resources(resources, resource_count);
	if (read)
		process_profiles_release(&profiles);
	agent_processes_prune(&sender->processes, period->number, sender->resolver);
	unlink(reading);
	free(reading);
	free(perf_data);
}

/* Pushes DIR/PID.pb.gz with the labels of DIR/PID.labels; both go once
 * the receiver answered, or when they cannot be read here (said so). False
 * when the receiver could not take it now. */
static bool push_kept(struct agent_sender *sender, const char *labels_path)
{
	struct agent_labels labels;
	char why[512] = "", *profile_path;
	size_t size = 0;
	unsigned char *data;
	enum push_result status = PUSH_UNREADABLE;
	bool read =
	    agent_kept_read(labels_path, &data, &size, &labels, &profile_path, why, sizeof(why));

	if (read)
		status = push(sender, data, size, NULL, &labels, why, sizeof(why));
	if (!read)
		report_error("%s; that profile is dropped", why);
	else if (status == PUSH_SENT)
		receiver_took(sender);
	else if (status == PUSH_REFUSED)
		report_error("the receiver refused %s: %s", profile_path, why);
	else if (status == PUSH_UNREADABLE)
		report_error("cannot read %s: %s; that profile is dropped", profile_path, why);
	else
		receiver_failed(sender, why);
	if (status == PUSH_SENT || status == PUSH_REFUSED || status == PUSH_UNREADABLE) {
		unlink(profile_path);
		unlink(labels_path);
	}
	agent_labels_free(&labels);
	free(data);
	free(profile_path);
	return status == PUSH_SENT || status == PUSH_REFUSED || status == PUSH_UNREADABLE;
}

/* Sends the OTLP request kept in `dir`, if any; it goes once the receiver
 * answered, or when it cannot be read here (said so). False when the
 * receiver could not take it now. */
static bool export_kept(struct agent_sender *sender, const char *dir)
{
	char why[512] = "", *path = agent_kept_otlp_path(dir);
	size_t size = 0;
	unsigned char *body = NULL;
	bool done = true;

	/* A link in its place is there too, and unreadable. */
	if (faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		body = agent_kept_read_otlp(path, &size, why, sizeof(why));
		if (!body)
			report_error("%s; that OTLP request is dropped", why);
		else
			done = send_otlp(sender, body, size, path);
		if (done)
			unlink(path);
	}
	free(body);
	free(path);
	return done;
}

/* Sends what `dir` keeps for each receiver, until one cannot take it
 * (`*stopped`: Pyroscope's, `*otlp_stopped`: OpenTelemetry's). */
static void push_period(struct agent_sender *sender, const char *dir, bool *stopped,
			bool *otlp_stopped)
{
	struct dirent **entries;
	int count = scandir(dir, &entries, agent_kept_is_labels_file, alphasort);

	for (int i = 0; i < count; i++) {
		char *path = xasprintf("%s/%s", dir, entries[i]->d_name);

		if (!*stopped)
			*stopped = !push_kept(sender, path);
		free(path);
		free(entries[i]);
	}
	free(count >= 0 ? entries : NULL);
	if (sender->options->otlp && !*otlp_stopped)
		*otlp_stopped = !export_kept(sender, dir);
}

void agent_sender_open(struct agent_sender *sender, const struct agent_send_options *options,
		       const char *skip, bool first)
{
	char *log_path = xasprintf("%s/agent.log", options->spool_dir);
	/* What the spool's lines name: the receivers periods wait for. */
	char *receivers =
	    options->target && options->otlp
		? xasprintf("%s or %s", options->target->url, options->otlp->url)
		: xstrdup(options->target ? options->target->url : options->otlp->url);

	*sender = (struct agent_sender){
	    .receivers = receivers,
	    .options = options,
	    .spool = {.dir = options->spool_dir,
		      .max_periods = options->max_periods,
		      .url = receivers},
	    .config = {.live_every_process = true},
	    .processes = {.state_folders = &options->selection->state_folders,
			  .names = options->names},
	};
	sender->memory_names.processes = &sender->processes;
	sender->config.jit_namer =
	    (struct jit_namer){.name = agent_memory_names_name, .context = &sender->memory_names};
	/* The sampler checked the folder; the worker opens it for itself. */
	if (agent_spool_make(&sender->spool) == 0)
		sender->log = agent_spool_open_file(log_path, O_WRONLY | O_CREAT | O_TRUNC, "w");
	free(log_path);
	if (!sender->log)
		sender->log = fopen("/dev/null", "we");
	sender->config.native =
	    (struct native_symbols_config){.target_root_fd = -1, .log = sender->log};
	agent_spool_take_left(&sender->spool, skip, first);
	if (options->runtime_events)
		sender->runtime_sessions = agent_runtime_sessions_start(
		    options->runtime_events, options->spool_dir, sender->log);
}

void agent_sender_note(struct agent_sender *sender, pid_t pid)
{
	agent_processes_note(&sender->processes, pid, sender->spool.next_number);
}

bool agent_sender_settle_labels(struct agent_sender *sender)
{
	return agent_processes_settle_labels(&sender->processes);
}

void agent_sender_add(struct agent_sender *sender, const char *dir)
{
	agent_spool_add(&sender->spool, dir);
	if (sender->runtime_sessions)
		agent_runtime_sessions_cut(sender->runtime_sessions,
					   sender->spool.periods[sender->spool.count - 1].number);
}

void agent_sender_round(struct agent_sender *sender)
{
	bool stopped = false, otlp_stopped = false;

	/* The runtime sessions' threads write to the log too: none between
	 * the truncation and the rewind. */
	flockfile(sender->log);
	if (ftell(sender->log) > MAX_LOG_BYTES && fflush(sender->log) == 0 &&
	    ftruncate(fileno(sender->log), 0) == 0)
		rewind(sender->log);
	funlockfile(sender->log);
	agent_spool_drop_oldest(&sender->spool);
	for (size_t i = 0; i < sender->spool.count;) {
		const struct agent_period *period = &sender->spool.periods[i];
		char *perf_data = xasprintf("%s/perf.data", period->dir);

		if (access(perf_data, F_OK) == 0)
			encode_period(sender, period, &stopped, &otlp_stopped);
		else
			push_period(sender, period->dir, &stopped, &otlp_stopped);
		free(perf_data);
		/* Sent, or nothing kept to send later: each receiver's kept
		 * files go once that receiver took them. */
		if ((!stopped && !otlp_stopped) || rmdir(period->dir) == 0)
			agent_spool_remove(&sender->spool, i);
		else
			i++;
	}
	/* The symbols of processes gone were freed: the worker lives for
	 * days, so its heap goes back to the machine. */
	malloc_trim(0);
}

void agent_sender_close(struct agent_sender *sender)
{
	agent_runtime_sessions_stop(sender->runtime_sessions);
	agent_spool_close(&sender->spool);
	free(sender->receivers);
	resolver_free(sender->resolver);
	agent_processes_release(&sender->processes);
	http_connection_close(&sender->connection);
	http_connection_close(&sender->otlp_connection);
	http_client_cleanup();
	if (sender->log)
		fclose(sender->log);
}
