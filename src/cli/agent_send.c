#include "agent_send.h"
#include "dotnet_diagnostics.h"
#include "pod_labels.h"
#include "process_profiles.h"
#include "pyroscope_push.h"
#include "symbol_options.h"
#include "target_process.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEEN_FILE	  "processes-seen"
#define LABELS_SUFFIX	  ".labels"
#define MAX_PROFILE_BYTES ((size_t)64 << 20)
/* A process younger than this may not have loaded its runtime yet: it is
 * looked at again in the next period. */
#define SETTLE_SECONDS 1.0

/* A process as the sender saw it: pid reuse gives another start time. */
struct seen_process {
	int pid;
	unsigned long long start_ticks;
};

static double uptime_seconds(void)
{
	FILE *file = fopen("/proc/uptime", "re");
	double uptime = 0;

	if (file) {
		if (fscanf(file, "%lf", &uptime) != 1)
			uptime = 0;
		fclose(file);
	}
	return uptime;
}

static size_t read_seen(const char *path, struct seen_process **seen)
{
	FILE *file = fopen(path, "re");
	size_t count = 0, capacity = 0;
	struct seen_process process;

	*seen = NULL;
	while (file && fscanf(file, "%d %llu", &process.pid, &process.start_ticks) == 2) {
		grow_array((void **)seen, &capacity, count + 1, sizeof(**seen));
		(*seen)[count++] = process;
	}
	if (file)
		fclose(file);
	return count;
}

static bool was_seen(const struct seen_process *seen, size_t count,
		     const struct seen_process *process)
{
	for (size_t i = 0; i < count; i++)
		if (seen[i].pid == process->pid && seen[i].start_ticks == process->start_ticks)
			return true;
	return false;
}

/* Switches on the perf map and jitdump of each .NET process once in its
 * life: SPOOL/processes-seen lists every process looked at (pid and start
 * time, so that a reused pid or a restarted service is looked at anew).
 * The runtime then writes every method it has prepared so far, so the
 * period just sampled is named too. Returns the processes seen before
 * this round (malloc'd in `*seen`). */
static size_t switch_on_dotnet_perfmaps(const char *spool_dir, FILE *log,
					struct seen_process **seen)
{
	char *path = xasprintf("%s/%s", spool_dir, SEEN_FILE);
	char *temporary = xasprintf("%s.partial", path);
	size_t seen_count = read_seen(path, seen);
	struct process_entry *processes;
	size_t count = target_process_list(&processes);
	double uptime = uptime_seconds(), ticks_per_second = (double)sysconf(_SC_CLK_TCK);
	FILE *out = fopen(temporary, "we");

	for (size_t i = 0; i < count; i++) {
		struct seen_process process = {processes[i].pid,
					       target_process_start_ticks(processes[i].pid)};
		struct target_process target;

		if (!was_seen(*seen, seen_count, &process)) {
			if (uptime - (double)process.start_ticks / ticks_per_second <
			    SETTLE_SECONDS)
				continue;
			if (target_process_maps_file(process.pid, "libcoreclr.so") &&
			    target_process_open(process.pid, &target) == 0) {
				dotnet_ensure_perfmap(&target, log);
				target_process_close(&target);
			}
		}
		if (out)
			fprintf(out, "%d %llu\n", process.pid, process.start_ticks);
	}
	if (out && fclose(out) == 0)
		rename(temporary, path);
	free(processes);
	free(temporary);
	free(path);
	return seen_count;
}

/* Control characters would end a line of the labels file. */
static void write_label(FILE *out, const char *key, const char *value)
{
	fprintf(out, "%s=", key);
	for (; *value; value++)
		fputc((unsigned char)*value < 0x20 || *value == 0x7f ? '?' : *value, out);
	fputc('\n', out);
}

/* DIR/PID.labels beside DIR/PID.pb.gz: the service name, then the labels, "key=value" a line. */
static void write_labels(const struct agent_send_options *options,
			 const struct process_profile *profile, bool seen_before)
{
	struct pod_labels pod;
	char *path = xasprintf("%.*s" LABELS_SUFFIX,
			       (int)(strlen(profile->path) - strlen(".pb.gz")), profile->path);
	char service[POD_NAME_MAX + NAMESPACE_MAX + 2], pid[16];
	FILE *out;

	pod_labels_read(profile->pid, &pod);
	if (pod.refused_file && !seen_before) /* once in its life */
		report_warning("pid %d: %s in its root is %s: its profile has no pod label",
			       (int)profile->pid, pod.refused_file, pod.refused_why);
	if (pod.namespace[0]) {
		char workload[POD_NAME_MAX + 1];

		pod_labels_workload(pod.pod[0] ? pod.pod : profile->process_name, workload,
				    sizeof(workload));
		snprintf(service, sizeof(service), "%s/%s", pod.namespace, workload);
	} else {
		snprintf(service, sizeof(service), "%s", profile->process_name);
	}
	snprintf(pid, sizeof(pid), "%d", (int)profile->pid);
	out = fopen(path, "we");
	if (!out) {
		report_error("cannot write %s: %s", path, strerror(errno));
		free(path);
		return;
	}
	write_label(out, "service_name", service);
	if (pod.namespace[0])
		write_label(out, "namespace", pod.namespace);
	if (pod.pod[0])
		write_label(out, "pod", pod.pod);
	if (pod.container[0])
		write_label(out, "container", pod.container);
	write_label(out, "node", options->node);
	write_label(out, "process", profile->process_name);
	write_label(out, "pid", pid);
	for (size_t i = 0; i < options->labels.count; i++)
		fprintf(out, "%s\n", options->labels.items[i]);
	fclose(out);
	free(path);
}

/* DIR/perf.data into DIR/PID.pb.gz and DIR/PID.labels, then perf.data
 * goes. Returns 0, or -1 when it could not be read. */
static int encode_period(const struct agent_send_options *options, const char *dir, FILE *log,
			 const struct seen_process *seen, size_t seen_count)
{
	struct symbol_options symbols = {0};
	struct resolver_config config = {.capture_dir = dir, .live_every_process = true};
	struct process_profile *profiles;
	char *perf_data = xasprintf("%s/perf.data", dir);
	long count;

	symbol_options_apply(&symbols, -1, log, &config.native);
	count = process_profiles_write(dir, &config, &profiles);
	for (long i = 0; i < count; i++)
		if (profiles[i].path)
			write_labels(options, &profiles[i],
				     was_seen(seen, seen_count,
					      &(struct seen_process){
						  profiles[i].pid,
						  target_process_start_ticks(profiles[i].pid)}));
	process_profiles_free(profiles, count > 0 ? (size_t)count : 0);
	symbol_options_release(&symbols);
	unlink(perf_data);
	free(perf_data);
	return count < 0 ? -1 : 0;
}

static unsigned char *read_small_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
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

/* Pushes DIR/PID.pb.gz with the labels of DIR/PID.labels. Returns as
 * pyroscope_push_profile. */
static int push_one(const struct agent_send_options *options, const char *labels_path, char *why,
		    size_t why_size)
{
	char *profile_path = xasprintf(
	    "%.*s.pb.gz", (int)(strlen(labels_path) - strlen(LABELS_SUFFIX)), labels_path);
	struct string_list labels = {0};
	char line[1024], *service = NULL;
	FILE *file = fopen(labels_path, "re");
	size_t size = 0;
	unsigned char *data = read_small_file(profile_path, &size);
	int status = -1;

	while (file && fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = '\0';
		if (!service && !strncmp(line, "service_name=", 13))
			service = xstrdup(line + 13);
		else
			string_list_append(&labels, xstrdup(line));
	}
	if (file)
		fclose(file);
	if (!data || !service)
		snprintf(why, why_size, "cannot read %s", data ? labels_path : profile_path);
	else
		status = pyroscope_push_profile(
		    data, size,
		    &(struct push_request){.url = options->url,
					   .app_name = service,
					   .labels = (const char *const *)labels.items,
					   .label_count = labels.count,
					   .timeout = options->timeout,
					   .tries = 1},
		    why, why_size);
	if (status <= 0) {
		unlink(profile_path);
		unlink(labels_path);
	}
	for (size_t i = 0; i < labels.count; i++)
		free((char *)labels.items[i]);
	string_list_clear(&labels);
	free(service);
	free(data);
	free(profile_path);
	return status;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_labels_file(const struct dirent *entry)
{
	size_t length = strlen(entry->d_name);

	return length > strlen(LABELS_SUFFIX) &&
	       !strcmp(entry->d_name + length - strlen(LABELS_SUFFIX), LABELS_SUFFIX);
}

/* Pushes every profile of `dir`, then removes it. Returns 0, or
 * AGENT_SEND_RETRY_LATER with `why` once the receiver cannot take one. */
static int push_period(const struct agent_send_options *options, const char *dir, char *why,
		       size_t why_size)
{
	struct dirent **entries;
	int count = scandir(dir, &entries, is_labels_file, by_name), status = 0;

	for (int i = 0; i < count; i++) {
		char *path = xasprintf("%s/%s", dir, entries[i]->d_name);

		if (status == 0) {
			int pushed = push_one(options, path, why, why_size);

			if (pushed > 0)
				status = AGENT_SEND_RETRY_LATER;
			else if (pushed < 0)
				report_error("the receiver refused %s: %s", path, why);
		}
		free(path);
		free(entries[i]);
	}
	free(count >= 0 ? entries : NULL);
	if (status == 0)
		rmdir(dir);
	return status;
}

static void keep_why(const char *spool_dir, const char *why)
{
	char *path = xasprintf("%s/%s", spool_dir, AGENT_SEND_WHY_FILE);
	FILE *file = fopen(path, "we");

	if (file) {
		fprintf(file, "%s\n", why);
		fclose(file);
	}
	free(path);
}

int agent_send_periods(const struct agent_send_options *options, char *const *periods, size_t count)
{
	char *log_path = xasprintf("%s/agent.log", options->spool_dir), why[512] = "";
	/* The last sender's log only: the symbol lines come again each time. */
	FILE *log = fopen(log_path, "we");
	struct seen_process *seen;
	size_t seen_count;
	int status = 0;

	free(log_path);
	if (!log)
		log = fopen("/dev/null", "we");
	seen_count = switch_on_dotnet_perfmaps(options->spool_dir, log, &seen);

	for (size_t i = 0; i < count; i++) {
		char *perf_data = xasprintf("%s/perf.data", periods[i]);

		if (access(perf_data, F_OK) == 0 &&
		    encode_period(options, periods[i], log, seen, seen_count) < 0)
			status = 1;
		free(perf_data);
	}
	for (size_t i = 0; i < count && status != AGENT_SEND_RETRY_LATER; i++)
		if (push_period(options, periods[i], why, sizeof(why)) == AGENT_SEND_RETRY_LATER) {
			keep_why(options->spool_dir, why);
			status = AGENT_SEND_RETRY_LATER;
		}
	fclose(log);
	free(seen);
	return status;
}
