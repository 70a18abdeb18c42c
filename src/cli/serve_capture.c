#include "serve_capture.h"
#include "serve_child.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* pprof and speedscope are listed before every profcpu writes them: the
 * server answers 404 for a file a capture does not hold. */
static const struct capture_format formats[] = {
    {"svg", "flamegraph.svg", "image/svg+xml"},
    {"zip", "prof.trace.zip", "application/zip"},
    {"folded", "folded_stacks.out", "text/plain; charset=utf-8"},
    {"pprof", "profile.pb.gz", "application/octet-stream"},
    {"speedscope", "speedscope.json", "application/json"},
    {"perf-script", "perf_script.out", "text/plain; charset=utf-8"},
    {"tar", "prof.tar.gz", "application/gzip"},
    {"perf-data", "perf.data", "application/octet-stream"},
    {"log", "profcpu.log", "text/plain; charset=utf-8"},
    /* With off_cpu=1. */
    {"offcpu", "offcpu_flamegraph.svg", "image/svg+xml"},
    {"offcpu-folded", "offcpu_folded_stacks.out", "text/plain; charset=utf-8"},
    {"wall", "wall_flamegraph.svg", "image/svg+xml"},
    /* Of a .NET target: its runtime's events and the profiles made of them. */
    {"nettrace", "runtime.nettrace", "application/octet-stream"},
    {"exceptions", "exceptions_flamegraph.svg", "image/svg+xml"},
    {"exceptions-pprof", "exceptions.pb.gz", "application/octet-stream"},
    {"contention", "contention_flamegraph.svg", "image/svg+xml"},
    {"contention-pprof", "contention.pb.gz", "application/octet-stream"},
    {"alloc", "alloc_flamegraph.svg", "image/svg+xml"},
    {"alloc-pprof", "alloc.pb.gz", "application/octet-stream"},
    {"waits", "waits_flamegraph.svg", "image/svg+xml"},
    {"waits-pprof", "waits.pb.gz", "application/octet-stream"},
};

const struct capture_format *capture_format_find(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		if (!strcmp(name, formats[i].name) || !strcmp(name, formats[i].file))
			return &formats[i];
	return NULL;
}

void capture_format_names(char *names, size_t size)
{
	names[0] = '\0';
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		snprintf(names + strlen(names), size - strlen(names), "%s%s", i ? ", " : "",
			 formats[i].name);
}

/* The last non-empty line of what the child printed on stderr, without
 * its "profcpu: ". */
static void keep_last_line(const char *text, char *line, size_t size)
{
	static const char prefix[] = "profcpu: ";
	size_t end = strlen(text), start;

	while (end && text[end - 1] == '\n')
		end--;
	start = end;
	while (start && text[start - 1] != '\n')
		start--;
	if (end - start > strlen(prefix) && !strncmp(text + start, prefix, strlen(prefix)))
		start += strlen(prefix);
	snprintf(line, size, "%.*s", (int)(end - start), text + start);
}

int capture_start(struct capture *capture, const char *output_dir,
		  const struct capture_request *request, char *error, size_t error_size)
{
	char pid_text[16], seconds_text[16], frequency_text[16], date[32], *folder;
	const char *arguments[16];
	size_t count = 0;
	time_t now = time(NULL);
	struct tm local;
	int spawned;

	strftime(date, sizeof(date), "%Y-%m-%d_%H-%M-%S", localtime_r(&now, &local));
	snprintf(capture->name, sizeof(capture->name), "pid%d_%s", (int)request->pid, date);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)request->pid);
	snprintf(seconds_text, sizeof(seconds_text), "%u", request->seconds);
	snprintf(frequency_text, sizeof(frequency_text), "%u", request->frequency);
	folder = xasprintf("%s/%s", output_dir, capture->name);
	arguments[count++] = "profcpu";
	arguments[count++] = "collect";
	arguments[count++] = "-pid";
	arguments[count++] = pid_text;
	arguments[count++] = "-duration";
	arguments[count++] = seconds_text;
	if (request->frequency) {
		arguments[count++] = "-F";
		arguments[count++] = frequency_text;
	}
	if (request->off_cpu)
		arguments[count++] = "--off-cpu";
	if (request->call_graph) {
		arguments[count++] = "--call-graph";
		arguments[count++] = request->call_graph;
	}
	if (request->events) {
		arguments[count++] = "-events";
		arguments[count++] = request->events;
	}
	arguments[count++] = "-o";
	arguments[count++] = folder;
	arguments[count] = NULL;

	spawned = serve_child_spawn(arguments, true, &capture->child, &capture->messages_fd);
	free(folder);
	if (spawned != 0) {
		snprintf(error, error_size, "cannot start the capture: %s", strerror(spawned));
		return -1;
	}
	capture->pidfd = (int)syscall(SYS_pidfd_open, capture->child, 0);
	return 0;
}

void capture_stop(const struct capture *capture)
{
	/* Without pidfds (kernels before 5.3) its pid: not reaped before
	 * capture_release, so still the child's. */
	if (capture->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, capture->pidfd, SIGTERM, NULL, 0);
	else
		kill(capture->child, SIGTERM);
}

void capture_release(struct capture *capture)
{
	while (waitpid(capture->child, NULL, 0) < 0 && errno == EINTR)
		;
	if (capture->pidfd >= 0)
		close(capture->pidfd);
	capture->pidfd = -1;
}

/* What the child printed on stderr, its first 4 KB (collect's messages are
 * a few lines), read to the end so the child never blocks on a full pipe. */
static void read_messages(int fd, char *messages, size_t size)
{
	size_t kept = 0;
	char discard[4096];
	ssize_t got;

	for (;;) {
		bool full = kept + 1 >= size;

		got = full ? read(fd, discard, sizeof(discard))
			   : read(fd, messages + kept, size - 1 - kept);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (!full)
			kept += (size_t)got;
	}
	messages[kept] = '\0';
}

int capture_finish(struct capture *capture, char *error, size_t error_size)
{
	char messages[4096];
	siginfo_t ended = {0};
	bool exited;

	read_messages(capture->messages_fd, messages, sizeof(messages));
	close(capture->messages_fd);
	/* Not reaped yet (capture_release): its pid stays its own for
	 * capture_stop. */
	while (waitid(P_PID, (id_t)capture->child, &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	exited = ended.si_code == CLD_EXITED;
	if (exited && ended.si_status == 0)
		return 0;
	if (exited && ended.si_status == 2) {
		keep_last_line(messages, error, error_size);
		return CAPTURE_REFUSED;
	}
	if (!exited)
		snprintf(error, error_size, "the capture was killed by signal %d (%s)",
			 ended.si_status, strsignal(ended.si_status));
	else
		keep_last_line(messages, error, error_size);
	if (!error[0])
		snprintf(error, error_size, "the capture failed (exit status %d)", ended.si_status);
	return -1;
}
