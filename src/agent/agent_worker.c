#include "agent_worker.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Room for hours of periods while a worker is held up (a receiver too
 * slow); samples' notes take at most half of it. */
#define PIPE_BYTES (1 << 20)
/* How often a new process's pod labels are read while still unfound. */
#define LABELS_AGAIN_MS 100

enum message_kind { MESSAGE_SAMPLED = 1, MESSAGE_PERIOD = 2 };

/* Fixed size, under PIPE_BUF: each write is whole. */
struct message {
	int32_t kind;
	int32_t pid;	 /* MESSAGE_SAMPLED */
	char folder[56]; /* MESSAGE_PERIOD: the period's folder name in the spool */
};

static bool read_message(int fd, struct message *message)
{
	size_t got = 0;

	while (got < sizeof(*message)) {
		ssize_t n = read(fd, (char *)message + got, sizeof(*message) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	message->folder[sizeof(message->folder) - 1] = '\0';
	return true;
}

/* Whether a message comes within `milliseconds`. */
static bool message_within(int fd, int milliseconds)
{
	struct pollfd polled = {.fd = fd, .events = POLLIN};

	return poll(&polled, 1, milliseconds) != 0;
}

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Milliseconds until `due`, none once it is past. */
static int milliseconds_until(int64_t due)
{
	int64_t left = due - monotonic_ms();

	return left > 0 ? (int)left : 0;
}

/* The worker's life: a round after each period (and the notes that came
 * with it), a last one once the sampler closes the pipe. */
static _Noreturn void worker_main(int fd, const struct agent_send_options *options,
				  const char *current, bool first)
{
	struct agent_sender sender;
	struct message message;
	bool pending;
	int64_t labels_due = 0; /* when new processes' labels are read again; 0: none wait */

	/* A stop of the agent is for the sampler: the worker finishes. A
	 * receiver that hung up is an error of that push. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	agent_sender_open(&sender, options, current, first);
	/* The perf maps a worker before this one turned on (it died, or the
	 * agent was killed) are this one's to turn off. */
	if (agent_processes_adopt(&sender.processes, options->spool_dir))
		fprintf(sender.log, "perf maps turned on by an earlier worker: %zu, taken over\n",
			sender.processes.switched_count);
	pending = sender.spool.count > 0;
	while (true) {
		if (pending && !message_within(fd, 0)) {
			agent_sender_round(&sender);
			pending = false;
		}
		/* A new process's pod labels may not be readable yet: read again
		 * every LABELS_AGAIN_MS, however many notes come. */
		if (labels_due && (milliseconds_until(labels_due) == 0 ||
				   !message_within(fd, milliseconds_until(labels_due)))) {
			labels_due = agent_sender_settle_labels(&sender)
					 ? monotonic_ms() + LABELS_AGAIN_MS
					 : 0;
			continue;
		}
		if (!read_message(fd, &message))
			break;
		if (message.kind == MESSAGE_SAMPLED) {
			agent_sender_note(&sender, message.pid);
			if (!labels_due)
				labels_due = monotonic_ms() + LABELS_AGAIN_MS;
		} else if (message.kind == MESSAGE_PERIOD && !strchr(message.folder, '/')) {
			char *dir = xasprintf("%s/%s", options->spool_dir, message.folder);

			agent_sender_add(&sender, dir);
			free(dir);
			pending = true;
		}
	}
	agent_sender_round(&sender);
	/* The targets are left writing no more than they did. */
	agent_processes_turn_off(&sender.processes, sender.log);
	agent_sender_close(&sender);
	fflush(stdout);
	fflush(stderr);
	_exit(0);
}

int agent_worker_start(struct agent_worker *worker, const struct agent_send_options *options,
		       const char *current)
{
	int fds[2];
	pid_t child;

	worker->options = options;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		report_error("cannot start the agent's worker: %s", strerror(errno));
		return -1;
	}
	fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES); /* else the default, 64 KiB */
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child < 0) {
		report_error("cannot start the agent's worker: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (child == 0) {
		close(fds[1]);
		worker_main(fds[0], options, current, worker->starts == 0);
	}
	close(fds[0]);
	fcntl(fds[1], F_SETFL, O_NONBLOCK); /* the sampler never waits on the worker */
	worker->pid = child;
	worker->pipe_fd = fds[1];
	worker->starts++;
	return 0;
}

static int send_message(struct agent_worker *worker, const struct message *message)
{
	return write(worker->pipe_fd, message, sizeof(*message)) == (ssize_t)sizeof(*message) ? 0
											      : -1;
}

void agent_worker_note_sample(struct agent_worker *worker, uint32_t pid)
{
	int queued = 0;
	bool added;

	if (!worker->pid || pid == 0) /* the idle task is no process */
		return;
	id_map_get(&worker->noted, pid, 0, &added);
	if (!added || (ioctl(worker->pipe_fd, FIONREAD, &queued) == 0 &&
		       queued > fcntl(worker->pipe_fd, F_GETPIPE_SZ) / 2))
		return;
	send_message(worker, &(struct message){.kind = MESSAGE_SAMPLED, .pid = (int32_t)pid});
}

/* Ends the worker: its pipe closed, it exits after its last round (or is
 * killed first when `kill_it`). */
static void stop_worker(struct agent_worker *worker, bool kill_it)
{
	int status;

	close(worker->pipe_fd);
	worker->pipe_fd = -1;
	if (kill_it)
		kill(worker->pid, SIGKILL);
	if (waitpid(worker->pid, &status, 0) == worker->pid && WIFSIGNALED(status) && !kill_it)
		report_error("the agent's worker died (%s)", strsignal(WTERMSIG(status)));
	worker->pid = 0;
}

void agent_worker_period_done(struct agent_worker *worker, const char *finished,
			      const char *current)
{
	struct message message = {.kind = MESSAGE_PERIOD};
	const char *name = strrchr(finished, '/');
	int status;

	id_map_release(&worker->noted);
	snprintf(message.folder, sizeof(message.folder), "%s", name ? name + 1 : finished);
	if (worker->pid && waitpid(worker->pid, &status, WNOHANG) == worker->pid) {
		report_error("the agent's worker died (%s): another starts",
			     WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "it exited");
		close(worker->pipe_fd);
		worker->pid = 0;
	}
	if (worker->pid && send_message(worker, &message) == 0)
		return;
	if (worker->pid) {
		bool held_up = errno == EAGAIN; /* hours of periods unread */

		if (held_up)
			report_error("the agent's worker has read no period for hours: another "
				     "starts");
		stop_worker(worker, held_up);
	}
	/* The new worker takes every period waiting in the spool. */
	agent_worker_start(worker, worker->options, current);
}

void agent_worker_finish(struct agent_worker *worker)
{
	if (worker->pid)
		stop_worker(worker, false);
	id_map_release(&worker->noted);
}
