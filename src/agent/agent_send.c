#include "agent_send.h"
#include "agent_runtime_profiles.h"
#include "http_client.h"
#include "otlp_profiles.h"
#include "pod_labels.h"
#include "process_profiles.h"
#include "pyroscope_push.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LABELS_SUFFIX	  ".labels"
#define PROFILE_NAME_KEY  "__name__=" /* in a labels file: not process_cpu */
#define PROFILE_SUFFIX	  ".pb.gz"
#define MAX_PROFILE_BYTES ((size_t)64 << 20)
/* agent.log starts again past this: the worker lives as long as the agent. */
#define MAX_LOG_BYTES (1L << 20)
/* How long a period's push waits for its runtime events' sessions to be
 * cut (agent_runtime_sessions.h): a process whose socket stalls costs its
 * runtime profiles of the period, not the push. */
#define RUNTIME_CUT_SECONDS 5

/* What a profile is sent with: its service name and labels. */
struct profile_labels {
	char *profile_name; /* Pyroscope's __name__; NULL: process_cpu */
	char *service;
	struct string_list labels; /* "key=value", malloc'd */
};

static void add_label(struct profile_labels *labels, const char *key, const char *value)
{
	char *label = xasprintf("%s=%s", key, value);

	make_printable(label); /* a control character would end a line of the labels file */
	string_list_append(&labels->labels, label);
}

/* The series labels of `profile`, whose process is `process`: what names
 * its workload (service, namespace, pod, container, node, the user's),
 * not the process itself, so that a workload's processes make one series
 * however many come and go. Their pids and names are in the profile. */
static void make_labels(const struct agent_send_options *options,
			const struct process_profile *profile, const struct agent_process *process,
			struct profile_labels *labels)
{
	const struct pod_labels *pod = &process->labels;

	*labels = (struct profile_labels){0};
	if (pod->namespace[0]) {
		char workload[POD_NAME_MAX + 1];

		pod_labels_workload(pod->pod[0] ? pod->pod : profile->process_name, workload,
				    sizeof(workload));
		labels->service = xasprintf("%s/%s", pod->namespace, workload);
		add_label(labels, "namespace", pod->namespace);
	} else if (pod->container[0]) {
		labels->service = xasprintf("container/%s", pod->container);
	} else {
		labels->service = xstrdup(profile->process_name);
	}
	make_printable(labels->service);
	if (pod->pod[0])
		add_label(labels, "pod", pod->pod);
	if (pod->container[0])
		add_label(labels, "container", pod->container);
	add_label(labels, "node", options->node);
	for (size_t i = 0; i < options->labels.count; i++)
		string_list_append(&labels->labels, xstrdup(options->labels.items[i]));
}

static void free_labels(struct profile_labels *labels)
{
	for (size_t i = 0; i < labels->labels.count; i++)
		free((char *)labels->labels.items[i]);
	string_list_clear(&labels->labels);
	free(labels->service);
	free(labels->profile_name);
}

static bool same_labels(const struct profile_labels *a, const struct profile_labels *b)
{
	if (strcmp(a->service, b->service) || a->labels.count != b->labels.count)
		return false;
	for (size_t i = 0; i < a->labels.count; i++)
		if (strcmp(a->labels.items[i], b->labels.items[i]))
			return false;
	return true;
}

/* A period's series: the processes that share their labels. */
struct series {
	struct profile_labels labels;
	size_t *members; /* indices of the period's processes */
	size_t member_count, member_capacity;
};

struct series_list {
	struct series *items;
	size_t count, capacity;
};

/* Adds process `index` with `labels` (taken) to its series, made when no
 * process had those labels yet. */
static void add_to_series(struct series_list *list, size_t index, struct profile_labels *labels)
{
	struct series *series = NULL;

	for (size_t i = 0; i < list->count && !series; i++)
		if (same_labels(&list->items[i].labels, labels))
			series = &list->items[i];
	if (series) {
		free_labels(labels);
	} else {
		grow_array((void **)&list->items, &list->capacity, list->count + 1,
			   sizeof(*list->items));
		series = &list->items[list->count++];
		*series = (struct series){.labels = *labels};
	}
	grow_array((void **)&series->members, &series->member_capacity, series->member_count + 1,
		   sizeof(*series->members));
	series->members[series->member_count++] = index;
}

static void free_series(struct series_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free_labels(&list->items[i].labels);
		free(list->items[i].members);
	}
	free(list->items);
}

/* Returns as pyroscope_push_profile; `span` may be NULL. Every push goes
 * on the sender's one connection, kept open while the receiver keeps it. */
static enum push_result push(struct agent_sender *sender, const unsigned char *data, size_t size,
			     const struct pprof_span *span, const struct profile_labels *labels,
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

/* Opens a file of the spool, never through a link: the agent runs as
 * root, and the spool's folders are its own (agent_spool_make). */
static FILE *open_spool_file(const char *path, int flags, const char *mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *file = fd >= 0 ? fdopen(fd, mode) : NULL;

	if (fd >= 0 && !file)
		close(fd);
	return file;
}

/* DIR/series-NUMBER followed by `suffix` (malloc'd). */
static char *kept_path(const char *dir, const struct series_profile *profile, const char *suffix)
{
	return xasprintf("%s/series-%06zu%s", dir, profile->number, suffix);
}

/* DIR/series-NUMBER.pb.gz and DIR/series-NUMBER.labels (the service name,
 * then the labels, a line each), for a later round. */
static void keep_profile(const char *dir, const struct series_profile *profile,
			 const struct profile_labels *labels)
{
	char *path = kept_path(dir, profile, PROFILE_SUFFIX);
	FILE *out = open_spool_file(path, O_WRONLY | O_CREAT | O_TRUNC, "w");
	bool written = out && fwrite(profile->data, 1, profile->size, out) == profile->size;

	if (out && fclose(out) != 0)
		written = false;
	if (written) {
		free(path);
		path = kept_path(dir, profile, LABELS_SUFFIX);
		out = open_spool_file(path, O_WRONLY | O_CREAT | O_TRUNC, "w");
		if (out) {
			fprintf(out, "service_name=%s\n", labels->service);
			if (labels->profile_name)
				fprintf(out, PROFILE_NAME_KEY "%s\n", labels->profile_name);
			for (size_t i = 0; i < labels->labels.count; i++)
				fprintf(out, "%s\n", labels->labels.items[i]);
			written = fclose(out) == 0;
		}
	}
	if (!written)
		report_error("cannot keep %s for a later push: %s; that profile is dropped", path,
			     strerror(errno));
	free(path);
}

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
			 const struct series_profile *profile, const struct profile_labels *labels,
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
		receiver_failed(sender, why);
		*stopped = true;
	}
	keep_profile(dir, profile, labels);
}

static int64_t clock_nanoseconds(clockid_t clock)
{
	struct timespec now;

	clock_gettime(clock, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Unix time minus CLOCK_MONOTONIC's, the clock of the samples and of the
 * runtime's events. */
static int64_t wall_clock_offset_now(void)
{
	return clock_nanoseconds(CLOCK_REALTIME) - clock_nanoseconds(CLOCK_MONOTONIC);
}

/* The worker's CPU time so far, in seconds. */
static double cpu_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* The period's processes into series, each process's labels read; and
 * each process's OTLP resource (malloc'd strings) when `resources`. */
static void group_series(struct agent_sender *sender, const struct agent_period *period,
			 const struct process_profiles *profiles, struct series_list *list,
			 struct otlp_process *resources)
{
	for (size_t i = 0; i < profiles->count; i++) {
		const struct process_profile *profile = &profiles->processes[i];
		struct agent_process *process =
		    agent_processes_of_profile(&sender->processes, profile, period->number);
		struct profile_labels labels;

		make_labels(sender->options, profile, process, &labels);
		if (resources)
			resources[i] =
			    (struct otlp_process){.index = i,
						  .pid = profile->pid,
						  .executable = profile->process_name,
						  .service = xstrdup(labels.service),
						  .namespace = xstrdup(process->labels.namespace),
						  .pod = xstrdup(process->labels.pod),
						  .container = xstrdup(process->labels.container)};
		add_to_series(list, i, &labels);
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

/* The period's processes to the OpenTelemetry receiver, in one request;
 * what it cannot take is dropped (said once until it takes them again). */
static void export_otlp(struct agent_sender *sender, const struct process_profiles *profiles,
			const struct otlp_process *resources, size_t count)
{
	const struct push_target *otlp = sender->options->otlp;
	char why[512] = "";
	size_t size;
	unsigned char *body = otlp_profiles_encode(profiles, resources, count, &size);
	enum push_result result = otlp_profiles_send(otlp, body, size, sender->options->timeout,
						     &sender->otlp_connection, why, sizeof(why));

	if (result == PUSH_SENT && sender->otlp_down)
		fprintf(stderr, "profcpu: %s takes OTLP profiles again\n", otlp->url);
	else if (result != PUSH_SENT && !sender->otlp_down)
		fprintf(stderr,
			"profcpu: cannot export OTLP profiles to %s: %s; each period's are dropped "
			"until it takes them (said once)\n",
			otlp->url, why);
	sender->otlp_down = result != PUSH_SENT;
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
 * (make_labels), and its entry: the newest seen with its pid (it may have
 * had no CPU sample in the period). */
static struct agent_process *labels_of_part(struct agent_sender *sender,
					    const struct agent_runtime_part *part,
					    unsigned long period, struct profile_labels *labels)
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
	make_labels(sender->options, &named, found, labels);
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
			struct profile_labels labels;

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
			free_labels(&labels);
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
		struct profile_labels labels;

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
		resources[(*count)++] =
		    (struct otlp_process){.index = OTLP_NO_SAMPLES,
					  .pid = part->pid,
					  .executable = part->comm,
					  .service = xstrdup(labels.service),
					  .namespace = xstrdup(process->labels.namespace),
					  .pod = xstrdup(process->labels.pod),
					  .container = xstrdup(process->labels.container),
					  .runtime = runtimes[i].profiles};
		free_labels(&labels);
	}
}

/* The period's perf.data into one profile per series, pushed or kept in
 * its folder; and its runtime events' profiles. */
static void encode_period(struct agent_sender *sender, const struct agent_period *period,
			  bool *stopped)
{
	char *perf_data = xasprintf("%s/perf.data", period->dir);
	char *reading = xasprintf("%s/" AGENT_SPOOL_READING, period->dir);
	struct process_profiles profiles;
	struct series_list list = {0};
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
	if (read) {
		if (sender->options->otlp)
			resources = xcalloc(profiles.count + 1, sizeof(*resources));
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
						      RUNTIME_CUT_SECONDS, sender->resolver,
						      sender->log, &runtime_count);
	if (resources) {
		resources =
		    xrealloc(resources, (resource_count + runtime_count + 1) * sizeof(*resources));
		add_runtime_resources(sender, period, &profiles, resources, &resource_count,
				      runtimes, runtime_count);
		if (resource_count)
			export_otlp(sender, &profiles, resources, resource_count);
	}
	if (sender->options->target) {
		size_t number = list.count;

		send_runtime_profiles(sender, period, runtimes, runtime_count,
				      profiles.wall_clock_offset, &number, stopped);
	}
	agent_runtime_periods_release(runtimes, runtime_count);
	for (size_t i = 0; read && i < profiles.count; i++)
		samples += profiles.processes[i].samples;
	fprintf(sender->log,
		"%s: %zu samples of %zu processes in %zu series named and encoded in %.1f ms of "
		"CPU, sent in %.1f ms\n",
		period->dir, samples, read ? profiles.count : 0, list.count,
		1000 * (made - start + encoding), 1000 * (cpu_seconds() - made - encoding));
	fflush(sender->log);
	free_series(&list);
	free_resources(resources, resource_count);
	if (read)
		process_profiles_release(&profiles);
	agent_processes_prune(&sender->processes, period->number, sender->resolver);
	unlink(reading);
	free(reading);
	free(perf_data);
}

static unsigned char *read_small_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat status;
	unsigned char *data = NULL;

	if (fd >= 0 && fstat(fd, &status) == 0 && (size_t)status.st_size <= MAX_PROFILE_BYTES) {
		data = xmalloc((size_t)status.st_size + 1);
		if (read(fd, data, (size_t)status.st_size) != status.st_size) {
			free(data);
			data = NULL;
		}
		*size = (size_t)status.st_size;
	}
	if (fd >= 0)
		close(fd);
	return data;
}

/* Reads DIR/PID.labels, as keep_profile wrote it. */
static bool read_labels(const char *path, struct profile_labels *labels)
{
	FILE *file = open_spool_file(path, O_RDONLY, "r");
	char line[1024];

	*labels = (struct profile_labels){0};
	while (file && fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = '\0';
		if (!labels->service && !strncmp(line, "service_name=", 13))
			labels->service = xstrdup(line + 13);
		else if (!labels->profile_name &&
			 !strncmp(line, PROFILE_NAME_KEY, strlen(PROFILE_NAME_KEY)))
			labels->profile_name = xstrdup(line + strlen(PROFILE_NAME_KEY));
		else
			string_list_append(&labels->labels, xstrdup(line));
	}
	if (file)
		fclose(file);
	return labels->service != NULL;
}

/* Pushes DIR/PID.pb.gz with the labels of DIR/PID.labels; both go once
 * the receiver answered. False when it could not take it now. */
static bool push_kept(struct agent_sender *sender, const char *labels_path)
{
	char *profile_path = xasprintf(
	    "%.*s" PROFILE_SUFFIX, (int)(strlen(labels_path) - strlen(LABELS_SUFFIX)), labels_path);
	struct profile_labels labels;
	char why[512] = "";
	size_t size = 0;
	unsigned char *data = read_small_file(profile_path, &size);
	enum push_result status = PUSH_REFUSED;

	if (!data || !read_labels(labels_path, &labels))
		snprintf(why, sizeof(why), "cannot read %s", data ? labels_path : profile_path);
	else
		status = push(sender, data, size, NULL, &labels, why, sizeof(why));
	if (status == PUSH_SENT)
		receiver_took(sender);
	else if (status == PUSH_REFUSED)
		report_error("the receiver refused %s: %s", profile_path, why);
	else
		receiver_failed(sender, why);
	if (status == PUSH_SENT || status == PUSH_REFUSED) {
		unlink(profile_path);
		unlink(labels_path);
	}
	free_labels(&labels);
	free(data);
	free(profile_path);
	return status == PUSH_SENT || status == PUSH_REFUSED;
}

static int is_labels_file(const struct dirent *entry)
{
	size_t length = strlen(entry->d_name);

	return length > strlen(LABELS_SUFFIX) &&
	       !strcmp(entry->d_name + length - strlen(LABELS_SUFFIX), LABELS_SUFFIX);
}

/* Pushes the profiles kept in `dir` until the receiver cannot take one. */
static void push_period(struct agent_sender *sender, const char *dir, bool *stopped)
{
	struct dirent **entries;
	int count = scandir(dir, &entries, is_labels_file, alphasort);

	for (int i = 0; i < count; i++) {
		char *path = xasprintf("%s/%s", dir, entries[i]->d_name);

		if (!*stopped)
			*stopped = !push_kept(sender, path);
		free(path);
		free(entries[i]);
	}
	free(count >= 0 ? entries : NULL);
}

void agent_sender_open(struct agent_sender *sender, const struct agent_send_options *options,
		       const char *skip, bool first)
{
	char *log_path = xasprintf("%s/agent.log", options->spool_dir);

	*sender = (struct agent_sender){
	    .options = options,
	    .spool = {.dir = options->spool_dir,
		      .max_periods = options->max_periods,
		      .url = options->target ? options->target->url : options->otlp->url},
	    .config = {.live_every_process = true},
	};
	/* The sampler checked the folder; the worker opens it for itself. */
	if (agent_spool_make(&sender->spool) == 0)
		sender->log = open_spool_file(log_path, O_WRONLY | O_CREAT | O_TRUNC, "w");
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
	bool stopped = false;

	if (ftell(sender->log) > MAX_LOG_BYTES && fflush(sender->log) == 0 &&
	    ftruncate(fileno(sender->log), 0) == 0)
		rewind(sender->log);
	agent_spool_drop_oldest(&sender->spool);
	for (size_t i = 0; i < sender->spool.count;) {
		const struct agent_period *period = &sender->spool.periods[i];
		char *perf_data = xasprintf("%s/perf.data", period->dir);

		if (access(perf_data, F_OK) == 0)
			encode_period(sender, period, &stopped);
		else if (!stopped)
			push_period(sender, period->dir, &stopped);
		free(perf_data);
		/* Sent, or nothing kept to send later. */
		if (!stopped || rmdir(period->dir) == 0)
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
	resolver_free(sender->resolver);
	agent_processes_release(&sender->processes);
	http_connection_close(&sender->connection);
	http_connection_close(&sender->otlp_connection);
	http_client_cleanup();
	if (sender->log)
		fclose(sender->log);
}
