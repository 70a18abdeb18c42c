#include "agent_runtime_sessions.h"
#include "target_process.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* A period's nettrace of one process stops growing past this: its events
 * come from a process the agent does not trust, into the agent's spool. */
#define MAX_PART_BYTES ((uint64_t)64 << 20)
/* The processes whose events are recorded at once, each with a thread that
 * cuts its sessions (and one that reads each session's stream): about
 * nine files open each while a cut is made. */
#define MAX_WATCHED 128
/* A period's nettraces of every process together stay under this: each
 * process's first OWN_PART_BYTES are its own, what is past them comes
 * from the rest, shared, first come first served. So processes that
 * stream without end take the shared part, never the first megabyte a
 * period of the others. */
#define MAX_PERIOD_BYTES ((uint64_t)256 << 20)
#define OWN_PART_BYTES	 ((uint64_t)1 << 20)
/* When the newest cuts were asked, for their takes' deadlines. */
#define ASKED_TIMES 16

/* The bytes the sessions of a period may write, held by each session
 * drawing from it and by the sessions while it is the newest. */
struct period_budget {
	struct eventpipe_budget budget;
	unsigned long period; /* the period its sessions' events begin in */
	size_t holders;	      /* under the sessions' lock */
};

/* A process whose events are recorded, and the thread that starts and cuts
 * its sessions: a process that answers nothing holds up that thread
 * alone. */
struct watched {
	struct agent_runtime_sessions *sessions;
	pid_t pid;
	pthread_t thread;
	/* The thread's own. */
	struct target_process target; /* its session keeps a pointer to it */
	struct eventpipe_session *session;
	char *path;    /* the session's nettrace */
	uint64_t from; /* its events are kept from this time on */
	struct period_budget *budget;
	/* Under the sessions' lock. */
	unsigned long cut_until; /* the newest period it cut + 1 */
	bool cutting;		 /* a cut of `cutting_period` (or the start) is made */
	unsigned long cutting_period;
	bool ended; /* its thread is done, to be joined */
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
	atomic_ulong sequence; /* of the files made */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	/* Under `lock`. */
	struct watched **watched;
	size_t watched_count, watched_capacity;
	bool stopping;
	/* The newest period asked to be cut, and the newest taken, each + 1
	 * (0: none yet). */
	unsigned long cut_asked_until, taken_until;
	struct timespec asked_at[ASKED_TIMES]; /* CLOCK_REALTIME; period % ASKED_TIMES */
	struct period_budget *budget;	       /* the newest period's */
	struct waiting_part *parts;
	size_t part_count, part_capacity;
};

static struct period_budget *new_budget(unsigned long period)
{
	struct period_budget *budget = xcalloc(1, sizeof(*budget));

	budget->budget.own_bytes = OWN_PART_BYTES;
	budget->budget.shared_bytes = MAX_PERIOD_BYTES - MAX_WATCHED * OWN_PART_BYTES;
	budget->period = period;
	budget->holders = 1;
	return budget;
}

/* Both under the sessions' lock. */
static struct period_budget *hold_budget(struct agent_runtime_sessions *sessions)
{
	sessions->budget->holders++;
	return sessions->budget;
}

static void release_budget(struct period_budget *budget)
{
	if (--budget->holders == 0)
		free(budget);
}

static void release_budget_unlocked(struct agent_runtime_sessions *sessions,
				    struct period_budget *budget)
{
	pthread_mutex_lock(&sessions->lock);
	release_budget(budget);
	pthread_mutex_unlock(&sessions->lock);
}

/* A new session of `watched`'s process into a file of its own, drawing
 * from `budget` (held for it, released when it is refused); false when the
 * runtime refused it (said on stderr by eventpipe_session_start). */
static bool start_session(struct watched *watched, struct period_budget *budget)
{
	struct agent_runtime_sessions *sessions = watched->sessions;
	struct eventpipe_config config = sessions->config;
	char *path = xasprintf("%s/runtime-%d-%lu-%lu.nettrace", sessions->dir, (int)watched->pid,
			       budget->period, atomic_fetch_add(&sessions->sequence, 1));
	struct eventpipe_session *session;

	config.budget = &budget->budget;
	session = eventpipe_session_start(&watched->target, &config, path, sessions->log);
	if (!session) {
		unlink(path);
		free(path);
		release_budget_unlocked(sessions, budget);
		return false;
	}
	watched->session = session;
	watched->path = path;
	watched->budget = budget;
	return true;
}

static bool has_exited(const struct target_process *target)
{
	struct pollfd exit_watch = {.fd = target->pidfd, .events = POLLIN};

	return target->pidfd >= 0 && poll(&exit_watch, 1, 0) > 0;
}

/* Cuts the session of `watched`: a new one started drawing from `budget`,
 * the old one stopped, its events until the moment between the two its
 * part. Returns false when the process is done with (it exited, or
 * refused the new session). */
static bool cut_session(struct watched *watched, struct period_budget *budget,
			struct agent_runtime_part *part)
{
	struct eventpipe_session *old_session = watched->session;
	struct period_budget *old_budget = watched->budget;
	char *old_path = watched->path;
	bool exited = has_exited(&watched->target);
	bool goes_on = !exited && start_session(watched, budget);
	uint64_t cut = goes_on ? clock_nanoseconds(CLOCK_MONOTONIC) : UINT64_MAX;

	if (exited)
		release_budget_unlocked(watched->sessions, budget);
	eventpipe_session_stop(old_session, watched->sessions->log);
	release_budget_unlocked(watched->sessions, old_budget);
	*part = (struct agent_runtime_part){
	    .pid = watched->pid, .path = old_path, .from = watched->from, .until = cut};
	memcpy(part->comm, watched->target.comm, sizeof(part->comm));
	watched->from = cut;
	if (!goes_on)
		watched->session = NULL;
	return goes_on;
}

static void drop_part(struct agent_runtime_part *part)
{
	unlink(part->path);
	free(part->path);
}

/* Under the sessions' lock: `waiting` for its take, or dropped when its
 * period was taken without it. */
static void post_part(struct agent_runtime_sessions *sessions, struct waiting_part *waiting)
{
	if (waiting->period < sessions->taken_until) {
		fprintf(sessions->log,
			"runtime events of pid %d: the part of period %lu came after the period "
			"was sent: dropped\n",
			(int)waiting->part.pid, waiting->period);
		drop_part(&waiting->part);
		return;
	}
	grow_array((void **)&sessions->parts, &sessions->part_capacity, sessions->part_count + 1,
		   sizeof(*sessions->parts));
	sessions->parts[sessions->part_count++] = *waiting;
}

/* The thread of a watched process: starts its session, cuts it as asked
 * until the process is done with or the sessions stop. */
static void *watch_process(void *context)
{
	struct watched *watched = context;
	struct agent_runtime_sessions *sessions = watched->sessions;
	struct period_budget *budget;
	bool opened, goes_on = false;

	pthread_mutex_lock(&sessions->lock);
	budget = hold_budget(sessions);
	pthread_mutex_unlock(&sessions->lock);
	opened = target_process_open(watched->pid, &watched->target) == 0;
	if (opened)
		goes_on = start_session(watched, budget);
	else
		release_budget_unlocked(sessions, budget);
	pthread_mutex_lock(&sessions->lock);
	watched->cutting = false;
	while (goes_on && !sessions->stopping) {
		/* Cuts asked while one was made are one: the newest period
		 * gets the events, the ones between none. */
		struct waiting_part waiting = {.period = sessions->cut_asked_until - 1};

		if (sessions->cut_asked_until <= watched->cut_until) {
			pthread_cond_wait(&sessions->changed, &sessions->lock);
			continue;
		}
		budget = hold_budget(sessions);
		watched->cutting = true;
		watched->cutting_period = waiting.period;
		pthread_mutex_unlock(&sessions->lock);
		goes_on = cut_session(watched, budget, &waiting.part);
		pthread_mutex_lock(&sessions->lock);
		watched->cutting = false;
		watched->cut_until = waiting.period + 1;
		post_part(sessions, &waiting);
		pthread_cond_broadcast(&sessions->changed);
	}
	pthread_mutex_unlock(&sessions->lock);
	/* Stopped: the session's events are no period's. */
	if (goes_on) {
		eventpipe_session_stop(watched->session, sessions->log);
		unlink(watched->path);
		free(watched->path);
		release_budget_unlocked(sessions, watched->budget);
	}
	if (opened)
		target_process_close(&watched->target);
	pthread_mutex_lock(&sessions->lock);
	watched->ended = true;
	pthread_cond_broadcast(&sessions->changed);
	pthread_mutex_unlock(&sessions->lock);
	return NULL;
}

/* Under the sessions' lock: the threads of processes done with joined
 * (each has ended: at once), their slots freed. */
static void reap_ended(struct agent_runtime_sessions *sessions)
{
	size_t kept = 0;

	for (size_t i = 0; i < sessions->watched_count; i++) {
		struct watched *watched = sessions->watched[i];

		if (watched->ended) {
			pthread_join(watched->thread, NULL);
			free(watched);
		} else {
			sessions->watched[kept++] = watched;
		}
	}
	sessions->watched_count = kept;
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

/* MAX_WATCHED processes' sessions and cuts need more files than the usual
 * soft limit of 1024. */
static void raise_open_file_limit(void)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
	}
}

struct agent_runtime_sessions *agent_runtime_sessions_start(const struct eventpipe_config *config,
							    const char *dir, FILE *log)
{
	struct agent_runtime_sessions *sessions = xcalloc(1, sizeof(*sessions));

	*sessions = (struct agent_runtime_sessions){.config = *config, .dir = dir, .log = log};
	sessions->config.max_bytes = MAX_PART_BYTES;
	sessions->config.private_file = true;
	sessions->budget = new_budget(0);
	remove_left_files(dir);
	raise_open_file_limit();
	pthread_mutex_init(&sessions->lock, NULL);
	pthread_cond_init(&sessions->changed, NULL);
	return sessions;
}

void agent_runtime_sessions_watch(struct agent_runtime_sessions *sessions, pid_t pid)
{
	struct watched *watched;

	pthread_mutex_lock(&sessions->lock);
	reap_ended(sessions);
	for (size_t i = 0; i < sessions->watched_count; i++)
		if (sessions->watched[i]->pid == pid)
			goto done;
	if (sessions->watched_count >= MAX_WATCHED) {
		fprintf(sessions->log,
			"runtime events: the events of %d processes are recorded, the most at "
			"once: none of pid %d\n",
			MAX_WATCHED, (int)pid);
		goto done;
	}
	watched = xcalloc(1, sizeof(*watched));
	*watched = (struct watched){.sessions = sessions,
				    .pid = pid,
				    .cut_until = sessions->cut_asked_until,
				    .cutting = true, /* its start: no period waits for it */
				    .cutting_period = ULONG_MAX};
	if (pthread_create(&watched->thread, NULL, watch_process, watched) != 0) {
		fprintf(sessions->log, "runtime events: no thread for the session of pid %d\n",
			(int)pid);
		free(watched);
		goto done;
	}
	grow_array((void **)&sessions->watched, &sessions->watched_capacity,
		   sessions->watched_count + 1, sizeof(*sessions->watched));
	sessions->watched[sessions->watched_count++] = watched;
done:
	pthread_mutex_unlock(&sessions->lock);
}

void agent_runtime_sessions_cut(struct agent_runtime_sessions *sessions, unsigned long period)
{
	pthread_mutex_lock(&sessions->lock);
	sessions->cut_asked_until = period + 1;
	clock_gettime(CLOCK_REALTIME, &sessions->asked_at[period % ASKED_TIMES]);
	release_budget(sessions->budget);
	sessions->budget = new_budget(period + 1);
	pthread_cond_broadcast(&sessions->changed);
	pthread_mutex_unlock(&sessions->lock);
}

/* Whether `watched`'s part of `period` may still come: its cut of that
 * period is being made, or about to be. One held up by an earlier cut has
 * none. */
static bool owes_part(const struct watched *watched, unsigned long period)
{
	return !watched->ended && watched->cut_until <= period &&
	       (!watched->cutting || watched->cutting_period == period);
}

static bool any_owes_part(const struct agent_runtime_sessions *sessions, unsigned long period)
{
	for (size_t i = 0; i < sessions->watched_count; i++)
		if (owes_part(sessions->watched[i], period))
			return true;
	return false;
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
	reap_ended(sessions);
	/* `seconds` from when the cut was asked. A period no cut was asked
	 * for (one an earlier worker left) has none. */
	if (sessions->cut_asked_until > period &&
	    sessions->cut_asked_until <= period + ASKED_TIMES) {
		deadline = sessions->asked_at[period % ASKED_TIMES];
		deadline.tv_sec += (time_t)seconds;
		deadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		while (any_owes_part(sessions, period) &&
		       pthread_cond_timedwait(&sessions->changed, &sessions->lock, &deadline) !=
			   ETIMEDOUT)
			;
		for (size_t i = 0; i < sessions->watched_count; i++)
			if (owes_part(sessions->watched[i], period))
				fprintf(sessions->log,
					"runtime events of pid %d: its session was not cut in %.1f "
					"s: its part of period %lu is dropped\n",
					(int)sessions->watched[i]->pid, seconds, period);
	}
	if (sessions->taken_until < period + 1)
		sessions->taken_until = period + 1;
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
	/* Each thread stops its session and ends; the list no longer changes:
	 * only the caller adds to it. */
	for (size_t i = 0; i < sessions->watched_count; i++) {
		pthread_join(sessions->watched[i]->thread, NULL);
		free(sessions->watched[i]);
	}
	for (size_t i = 0; i < sessions->part_count; i++)
		drop_part(&sessions->parts[i].part);
	release_budget(sessions->budget);
	free(sessions->watched);
	free(sessions->parts);
	pthread_mutex_destroy(&sessions->lock);
	pthread_cond_destroy(&sessions->changed);
	free(sessions);
}
