#include "agent_runtime_sessions.h"
#include "target_process.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A period's nettrace of one process stops growing past this: its events
 * come from a process the agent does not trust, into the agent's spool. */
#define MAX_PART_BYTES ((uint64_t)64 << 20)

/* A process whose events are recorded. */
struct watched {
	struct target_process *target; /* its session keeps a pointer to it */
	struct eventpipe_session *session;
	char *path;    /* the session's nettrace */
	uint64_t from; /* its events are kept from this time on */
};

/* A part waiting to be taken, with its period's number. */
struct waiting_part {
	struct agent_runtime_part part;
	unsigned long period;
};

struct agent_runtime_sessions {
	struct eventpipe_config config; /* the caller's, bounded */
	const char *dir;
	FILE *log;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	/* Under `lock`: what the worker asks, and what the thread made. */
	pid_t *to_watch;
	size_t to_watch_count, to_watch_capacity;
	bool cut_asked, stopping;
	/* The newest period asked to be cut, and the newest cut, each + 1
	 * (0: none yet). */
	unsigned long cut_asked_until, cut_done_until;
	struct timespec cutting_since; /* CLOCK_REALTIME; 0: no cut being made */
	struct waiting_part *parts;
	size_t part_count, part_capacity;
	/* The thread's own. */
	struct watched *watched;
	size_t watched_count, watched_capacity;
	unsigned long sequence; /* of the files made */
};

/* A new session of `watched`'s process into a file of its own; false when
 * the runtime refused it (said on stderr by eventpipe_session_start). */
static bool start_session(struct agent_runtime_sessions *sessions, struct watched *watched)
{
	char *path = xasprintf("%s/runtime-%d-%lu.nettrace", sessions->dir,
			       (int)watched->target->pid, sessions->sequence++);
	struct eventpipe_session *session =
	    eventpipe_session_start(watched->target, &sessions->config, path, sessions->log);

	if (!session) {
		unlink(path);
		free(path);
		return false;
	}
	watched->session = session;
	watched->path = path;
	return true;
}

static bool has_exited(const struct target_process *target)
{
	struct pollfd exit_watch = {.fd = target->pidfd, .events = POLLIN};

	return target->pidfd >= 0 && poll(&exit_watch, 1, 0) > 0;
}

static void close_target(struct target_process *target)
{
	target_process_close(target);
	free(target);
}

static void start_watching(struct agent_runtime_sessions *sessions, pid_t pid)
{
	struct watched watched = {.target = xcalloc(1, sizeof(*watched.target))};

	size_t i;

	for (i = 0; i < sessions->watched_count; i++)
		if (sessions->watched[i].target->pid == pid)
			break;
	if (i < sessions->watched_count || target_process_open(pid, watched.target) < 0) {
		free(watched.target);
		return;
	}
	if (!start_session(sessions, &watched)) {
		close_target(watched.target);
		return;
	}
	grow_array((void **)&sessions->watched, &sessions->watched_capacity,
		   sessions->watched_count + 1, sizeof(*sessions->watched));
	sessions->watched[sessions->watched_count++] = watched;
}

/* Cuts the session of `watched`: a new one started, the old one stopped,
 * its events until the moment between the two its part. Returns false
 * when the process is done with (it exited, or refused the new session). */
static bool cut_session(struct agent_runtime_sessions *sessions, struct watched *watched,
			struct agent_runtime_part *part)
{
	struct watched next = *watched;
	bool goes_on = !has_exited(watched->target) && start_session(sessions, &next);
	uint64_t cut = goes_on ? clock_nanoseconds(CLOCK_MONOTONIC) : UINT64_MAX;

	eventpipe_session_stop(watched->session, sessions->log);
	*part = (struct agent_runtime_part){.pid = watched->target->pid,
					    .path = watched->path,
					    .from = watched->from,
					    .until = cut};
	memcpy(part->comm, watched->target->comm, sizeof(part->comm));
	if (!goes_on)
		return false;
	*watched = next;
	watched->from = cut;
	return true;
}

static void cut_all(struct agent_runtime_sessions *sessions, unsigned long period)
{
	size_t kept = 0;

	for (size_t i = 0; i < sessions->watched_count; i++) {
		struct watched *watched = &sessions->watched[i];
		struct waiting_part waiting = {.period = period};
		bool goes_on = cut_session(sessions, watched, &waiting.part);

		pthread_mutex_lock(&sessions->lock);
		grow_array((void **)&sessions->parts, &sessions->part_capacity,
			   sessions->part_count + 1, sizeof(*sessions->parts));
		sessions->parts[sessions->part_count++] = waiting;
		pthread_mutex_unlock(&sessions->lock);
		if (goes_on)
			sessions->watched[kept++] = *watched;
		else
			close_target(watched->target);
	}
	sessions->watched_count = kept;
}

static void *run_sessions(void *context)
{
	struct agent_runtime_sessions *sessions = context;

	pthread_mutex_lock(&sessions->lock);
	while (!sessions->stopping) {
		if (sessions->to_watch_count) {
			pid_t pid = sessions->to_watch[--sessions->to_watch_count];

			pthread_mutex_unlock(&sessions->lock);
			start_watching(sessions, pid);
			pthread_mutex_lock(&sessions->lock);
		} else if (sessions->cut_asked) {
			/* Cuts asked while one was made are one: the newest period
			 * gets the events, the ones between none. */
			unsigned long period = sessions->cut_asked_until - 1;

			sessions->cut_asked = false;
			clock_gettime(CLOCK_REALTIME, &sessions->cutting_since);
			pthread_mutex_unlock(&sessions->lock);
			cut_all(sessions, period);
			pthread_mutex_lock(&sessions->lock);
			sessions->cutting_since = (struct timespec){0};
			sessions->cut_done_until = period + 1;
			pthread_cond_broadcast(&sessions->changed);
		} else {
			pthread_cond_wait(&sessions->changed, &sessions->lock);
		}
	}
	pthread_mutex_unlock(&sessions->lock);
	return NULL;
}

static int is_session_file(const struct dirent *entry)
{
	return fnmatch("runtime-*.nettrace", entry->d_name, 0) == 0;
}

/* The files of the sessions of a worker that died: their sessions ended
 * with it. */
static void remove_left_files(const char *dir)
{
	struct dirent **entries;
	int count = scandir(dir, &entries, is_session_file, NULL);

	for (int i = 0; i < count; i++) {
		char *path = xasprintf("%s/%s", dir, entries[i]->d_name);

		unlink(path);
		free(path);
		free(entries[i]);
	}
	free(count >= 0 ? entries : NULL);
}

struct agent_runtime_sessions *agent_runtime_sessions_start(const struct eventpipe_config *config,
							    const char *dir, FILE *log)
{
	struct agent_runtime_sessions *sessions = xcalloc(1, sizeof(*sessions));

	*sessions = (struct agent_runtime_sessions){.config = *config, .dir = dir, .log = log};
	sessions->config.max_bytes = MAX_PART_BYTES;
	remove_left_files(dir);
	pthread_mutex_init(&sessions->lock, NULL);
	pthread_cond_init(&sessions->changed, NULL);
	if (pthread_create(&sessions->thread, NULL, run_sessions, sessions) != 0) {
		report_error("no thread for the runtime events' sessions: no lock contention, "
			     "exception or allocation profiles are pushed");
		pthread_mutex_destroy(&sessions->lock);
		pthread_cond_destroy(&sessions->changed);
		free(sessions);
		return NULL;
	}
	return sessions;
}

void agent_runtime_sessions_watch(struct agent_runtime_sessions *sessions, pid_t pid)
{
	pthread_mutex_lock(&sessions->lock);
	grow_array((void **)&sessions->to_watch, &sessions->to_watch_capacity,
		   sessions->to_watch_count + 1, sizeof(*sessions->to_watch));
	sessions->to_watch[sessions->to_watch_count++] = pid;
	pthread_cond_broadcast(&sessions->changed);
	pthread_mutex_unlock(&sessions->lock);
}

void agent_runtime_sessions_cut(struct agent_runtime_sessions *sessions, unsigned long period)
{
	pthread_mutex_lock(&sessions->lock);
	sessions->cut_asked = true;
	sessions->cut_asked_until = period + 1;
	pthread_cond_broadcast(&sessions->changed);
	pthread_mutex_unlock(&sessions->lock);
}

static void drop_part(struct agent_runtime_part *part)
{
	unlink(part->path);
	free(part->path);
}

struct agent_runtime_part *agent_runtime_sessions_take(struct agent_runtime_sessions *sessions,
						       unsigned long period, double seconds,
						       size_t *count)
{
	struct agent_runtime_part *taken = NULL;
	size_t capacity = 0, kept = 0;
	struct timespec deadline;

	*count = 0;
	pthread_mutex_lock(&sessions->lock);
	/* `seconds` from when the cut being made began: a thread held up by
	 * a stalled process holds up one period's push, not each one's. */
	if (sessions->cutting_since.tv_sec)
		deadline = sessions->cutting_since;
	else
		clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)seconds;
	/* A period no cut was asked for (one an earlier worker left) has none. */
	while (sessions->cut_done_until <= period && sessions->cut_asked_until > period &&
	       pthread_cond_timedwait(&sessions->changed, &sessions->lock, &deadline) != ETIMEDOUT)
		;
	if (sessions->cut_done_until <= period && sessions->cut_asked_until > period)
		fprintf(sessions->log,
			"runtime events: the sessions were not cut in %.0f s: period %lu has no "
			"runtime profiles\n",
			seconds, period);
	for (size_t i = 0; i < sessions->part_count; i++) {
		struct waiting_part *waiting = &sessions->parts[i];

		if (waiting->period == period) {
			grow_array((void **)&taken, &capacity, *count + 1, sizeof(*taken));
			taken[(*count)++] = waiting->part;
		} else if (waiting->period < period) {
			drop_part(&waiting->part); /* its period was sent without it */
		} else {
			sessions->parts[kept++] = *waiting;
		}
	}
	sessions->part_count = kept;
	pthread_mutex_unlock(&sessions->lock);
	return taken;
}

void agent_runtime_sessions_stop(struct agent_runtime_sessions *sessions)
{
	if (!sessions)
		return;
	pthread_mutex_lock(&sessions->lock);
	sessions->stopping = true;
	pthread_cond_broadcast(&sessions->changed);
	pthread_mutex_unlock(&sessions->lock);
	pthread_join(sessions->thread, NULL);
	for (size_t i = 0; i < sessions->watched_count; i++) {
		struct watched *watched = &sessions->watched[i];

		eventpipe_session_stop(watched->session, sessions->log);
		unlink(watched->path);
		free(watched->path);
		close_target(watched->target);
	}
	for (size_t i = 0; i < sessions->part_count; i++)
		drop_part(&sessions->parts[i].part);
	free(sessions->watched);
	free(sessions->parts);
	free(sessions->to_watch);
	pthread_mutex_destroy(&sessions->lock);
	pthread_cond_destroy(&sessions->changed);
	free(sessions);
}
