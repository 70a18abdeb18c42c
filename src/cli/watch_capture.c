#include "watch_capture.h"
#include "outputs.h"
#include "postprocess.h"
#include "util.h"
#include "watch_otlp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct watch_capture_writer {
	const char *output_dir, *ring_dir, *command_line;
	const struct target_process *target;
	const struct resolver_config *config;
	const struct fold_options *fold;
	const struct push_options *push; /* NULL: no --push */
	const struct push_target *otlp;	 /* NULL: no --otlp */
	double otlp_timeout;
	const char *otlp_service;
	struct string_list folders; /* the captures written (owned) */
	pid_t *children;	    /* writing outputs */
	size_t child_count, child_capacity;
};

struct watch_capture_writer *
watch_capture_writer_new(const char *output_dir, const char *ring_dir, const char *command_line,
			 const struct target_process *target, const struct resolver_config *config,
			 const struct fold_options *fold, const struct push_options *push)
{
	struct watch_capture_writer *writer = xcalloc(1, sizeof(*writer));

	*writer = (struct watch_capture_writer){.output_dir = output_dir,
						.ring_dir = ring_dir,
						.command_line = command_line,
						.target = target,
						.config = config,
						.fold = fold,
						.push = push};
	return writer;
}

void watch_capture_writer_otlp(struct watch_capture_writer *writer, const struct push_target *otlp,
			       double timeout, const char *service)
{
	writer->otlp = otlp;
	writer->otlp_timeout = timeout;
	writer->otlp_service = service;
}

/* DIR/2026-11-29_03-12-44_cpu, by the trigger's time on the wall clock
 * (-2, -3, ... for a second one in the same second). */
static char *make_capture_folder(const struct watch_capture_writer *writer,
				 const struct watch_capture *capture)
{
	uint64_t since_trigger = clock_nanoseconds(CLOCK_MONOTONIC) - capture->trigger;
	time_t when = (time_t)(clock_nanoseconds(CLOCK_REALTIME) / 1000000000ull) -
		      (time_t)(since_trigger / 1000000000ull);
	char stamp[32];

	strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", localtime(&when));
	for (unsigned n = 1; n < 100; n++) {
		char *dir =
		    n == 1 ? xasprintf("%s/%s_%s", writer->output_dir, stamp, capture->rule)
			   : xasprintf("%s/%s_%s-%u", writer->output_dir, stamp, capture->rule, n);

		if (mkdir(dir, 0755) == 0)
			return dir;
		if (errno != EEXIST) {
			report_error("cannot make the capture folder %s: %s", dir, strerror(errno));
			free(dir);
			return NULL;
		}
		free(dir);
	}
	report_error("cannot make a capture folder in %s: too many of the same second",
		     writer->output_dir);
	return NULL;
}

static int copy_file(int from_dir, const char *name, const char *to_dir)
{
	int in = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out;
	char *path = xasprintf("%s/%s", to_dir, name), buffer[65536];
	ssize_t got = 0;

	out = in < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	free(path);
	while (out >= 0 && (got = read(in, buffer, sizeof(buffer))) > 0)
		if (write_whole(out, buffer, (size_t)got) < 0)
			got = -1, errno = errno ? errno : EIO;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		got = -1;
	return in < 0 || out < 0 || got < 0 ? -1 : 0;
}

/* The target's perf map, its times and jitdump, as copied into the ring's
 * folder while sampling: the names of JIT code. */
static void copy_runtime_files(const struct watch_capture_writer *writer, const char *dir)
{
	DIR *ring = opendir(writer->ring_dir);
	struct dirent *entry;

	while (ring && (entry = readdir(ring))) {
		struct stat status;

		if (strncmp(entry->d_name, "perf-", 5) && strncmp(entry->d_name, "jit-", 4) &&
		    strncmp(entry->d_name, "perfinfo-", 9))
			continue;
		if (fstatat(dirfd(ring), entry->d_name, &status, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(status.st_mode))
			continue;
		if (copy_file(dirfd(ring), entry->d_name, dir) < 0)
			report_warning("cannot copy %s into %s: %s", entry->d_name, dir,
				       strerror(errno));
	}
	if (ring)
		closedir(ring);
}

/* The window's runtime events: links (on the ring's file system) to the
 * parts, which the ring drops when it has moved on. Returns how many were
 * linked, the first ones. */
static size_t link_runtime_parts(const struct watch_capture *capture, const char *dir)
{
	size_t linked = 0;

	for (; linked < capture->runtime_part_count; linked++) {
		char *path = xasprintf("%s/runtime-%zu.nettrace", dir, linked + 1);
		int status = link(capture->runtime_parts[linked].path, path);

		if (status < 0)
			report_warning("cannot link %s to %s: %s; the capture's runtime events "
				       "end before",
				       capture->runtime_parts[linked].path, path, strerror(errno));
		free(path);
		if (status < 0)
			break;
	}
	return linked;
}

static void log_capture(const struct watch_capture_writer *writer, FILE *log,
			const struct watch_capture *capture, long samples)
{
	const struct target_process *target = writer->target;

	fprintf(log, "command: %s\nprofcpu: %s\n", writer->command_line, PROFCPU_VERSION);
	if (target->pid == TARGET_EVERY_PROCESS)
		fprintf(log, "scope: every process%s%s\n", target->cgroup ? " of cgroup " : "",
			target->cgroup ? target->cgroup : "");
	else
		fprintf(log, "pid: %d (%d in its namespace)\ncomm: %s\n", (int)target->pid,
			(int)target->namespace_pid, target->comm);
	fprintf(log, "rule: %s: %s\n", capture->rule, capture->reason);
	fprintf(log, "window: %.1f s before the trigger, %.1f s after%s%s\n",
		(double)(capture->trigger - capture->from) / 1e9,
		(double)(capture->to - capture->trigger) / 1e9,
		capture->cut_short ? "; cut short by " : "",
		capture->cut_short ? capture->cut_short : "");
	fprintf(log, "samples: %ld\n", samples);
	if (capture->runtime_part_count)
		fprintf(log,
			"runtime events: %zu parts, runtime-1.nettrace to runtime-%zu.nettrace\n",
			capture->runtime_part_count, capture->runtime_part_count);
}

static int write_outputs(const struct watch_capture_writer *writer, const char *dir, FILE *log,
			 const struct watch_capture *capture)
{
	struct resolver_config config = *writer->config;
	struct runtime_trace runtime = {.status = -1};
	int status;

	config.capture_dir = dir;
	fflush(log);
	report_also_to(log);
	if (capture->runtime_part_count)
		watch_runtime_trace_read(dir, capture->runtime_parts, capture->runtime_part_count,
					 capture->from, capture->to, log, &runtime);
	status = postprocess_capture(dir, &config, NULL, writer->fold,
				     capture->runtime_part_count ? &runtime : NULL);
	runtime_trace_release(&runtime);
	report_also_to(NULL);
	if (status == 0)
		outputs_print_where(dir);
	/* Whatever the outputs, a profile that was written is sent. */
	if (writer->push && push_options_push(writer->push, dir) < 0)
		status = -1;
	if (writer->otlp && watch_otlp_send(writer->otlp, writer->otlp_timeout, dir, &config,
					    writer->otlp_service) < 0)
		status = -1;
	return status;
}

void watch_capture_write(struct watch_capture_writer *writer, const struct watch_ring *ring,
			 const struct watch_capture *capture, bool wait)
{
	char *dir = make_capture_folder(writer, capture), *path, *log_path;
	struct watch_capture linked;
	long samples;
	FILE *log;
	pid_t child;

	if (!dir)
		return;
	string_list_append(&writer->folders, xstrdup(dir));
	path = xasprintf("%s/perf.data", dir);
	samples = watch_ring_write(ring, capture->from, capture->to, path, writer->command_line);
	free(path);
	if (samples < 0) {
		free(dir);
		return;
	}
	copy_runtime_files(writer, dir);
	linked = *capture;
	linked.runtime_part_count = link_runtime_parts(capture, dir);
	capture = &linked;
	log_path = xasprintf("%s/profcpu.log", dir);
	log = fopen(log_path, "we");
	free(log_path);
	if (!log) {
		report_error("cannot write %s/profcpu.log: %s", dir, strerror(errno));
		free(dir);
		return;
	}
	log_capture(writer, log, capture, samples);
	fprintf(stderr, "profcpu: capture %s: %ld samples%s%s\n", dir, samples,
		capture->cut_short ? ", cut short by " : "",
		capture->cut_short ? capture->cut_short : "");
	fflush(NULL);
	/* Sampling goes on while a child writes the outputs from its copy. */
	child = wait ? -1 : fork();
	if (child == 0) {
		int status = write_outputs(writer, dir, log, capture) == 0 ? 0 : 1;

		fclose(log);
		fflush(NULL);
		_exit(status); /* the parent's sampling state is not the child's to free */
	}
	if (child < 0)
		write_outputs(writer, dir, log, capture);
	else {
		grow_array((void **)&writer->children, &writer->child_capacity,
			   writer->child_count + 1, sizeof(*writer->children));
		writer->children[writer->child_count++] = child;
	}
	fclose(log);
	free(dir);
}

static double folder_mib(const char *dir)
{
	DIR *folder = opendir(dir);
	struct dirent *entry;
	double bytes = 0;

	while (folder && (entry = readdir(folder))) {
		struct stat status;

		if (fstatat(dirfd(folder), entry->d_name, &status, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(status.st_mode))
			bytes += (double)status.st_size;
	}
	if (folder)
		closedir(folder);
	return bytes / (1 << 20);
}

double watch_capture_disk_mib(const struct watch_capture_writer *writer)
{
	double mib = 0;

	for (size_t i = 0; i < writer->folders.count; i++)
		mib += folder_mib(writer->folders.items[i]);
	return mib;
}

static void reap(struct watch_capture_writer *writer, int flags)
{
	size_t kept = 0;

	for (size_t i = 0; i < writer->child_count; i++) {
		int status;
		pid_t done;

		do
			done = waitpid(writer->children[i], &status, flags);
		while (done < 0 && errno == EINTR);
		if (done == 0)
			writer->children[kept++] = writer->children[i];
	}
	writer->child_count = kept;
}

void watch_capture_reap(struct watch_capture_writer *writer)
{
	reap(writer, WNOHANG);
}

void watch_capture_reap_all(struct watch_capture_writer *writer)
{
	reap(writer, 0);
}

void watch_capture_writer_free(struct watch_capture_writer *writer)
{
	if (!writer)
		return;
	watch_capture_reap_all(writer);
	for (size_t i = 0; i < writer->folders.count; i++)
		free((char *)writer->folders.items[i]);
	string_list_clear(&writer->folders);
	free(writer->children);
	free(writer);
}
