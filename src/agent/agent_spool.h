/* The agent's buffer of periods: one folder per period in the spool
 * folder, named in time order. The sampler makes each (its perf.data);
 * the worker (agent_worker.h) keeps the list of those waiting, oldest
 * first: a period waits while its perf.data is not read yet, or while a
 * receiver does not take its profiles (then kept in the folder:
 * agent_kept.h), each receiver's until that one takes them. At most
 * `max_periods` wait;
 * past that the oldest go, and the first time that happens one line says
 * so. */
#ifndef PROFCPU_AGENT_SPOOL_H
#define PROFCPU_AGENT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A worker renames a period's perf.data to this while it reads it: a
 * folder that still holds it after the worker died killed it, and is
 * dropped rather than read again. */
#define AGENT_SPOOL_READING "perf.data.reading"

struct agent_period {
	char *dir;
	unsigned long number; /* in the order the periods were sampled */
};

struct agent_spool {
	const char *dir;
	int fd; /* the folder, opened by agent_spool_make; -1 before */
	size_t max_periods;
	const char *url;	      /* the receivers, for the lines said */
	unsigned sequence;	      /* of the folders this run made */
	struct agent_period *periods; /* waiting, oldest first */
	size_t count, capacity;
	unsigned long next_number;
	bool said_dropping;
	unsigned long long dropped;
};

/* The default spool folder (malloc'd): $STATE_DIRECTORY/spool (systemd's
 * StateDirectory=), else /var/lib/profcpu/spool when root, else
 * /tmp/profcpu-agent-UID. */
char *agent_spool_default_dir(void);

/* Makes the spool folder (0700) and opens it, or opens the one there: it
 * must be a folder, not a symbolic link, of the agent's user and not
 * writable by others, as the agent (root) writes and reads there. Returns
 * 0, or -1 after one line that says what is wrong and how to fix it. */
int agent_spool_make(struct agent_spool *spool);

/* A new folder for the next period's perf.data (malloc'd), or NULL after
 * saying why. */
char *agent_spool_new_period(struct agent_spool *spool);

/* Takes the periods in the folder but `skip` (the one being sampled):
 * those a stopped agent or a dead worker left. One that a worker died
 * reading is dropped, said on stderr. With `say`, says how many were
 * taken. */
void agent_spool_take_left(struct agent_spool *spool, const char *skip, bool say);

/* `dir` is finished: it waits. */
void agent_spool_add(struct agent_spool *spool, const char *dir);

/* Opens a file in the spool (flags as open(2)'s, 0600 when made; `mode`
 * as fdopen(3)'s), never through a link: the agent runs as root, and the
 * spool's folders are its own (agent_spool_make). NULL when it cannot. */
FILE *agent_spool_open_file(const char *path, int flags, const char *mode);

/* Past max_periods the oldest go. */
void agent_spool_drop_oldest(struct agent_spool *spool);

/* Removes the folder of period `index` with what it holds, and the period. */
void agent_spool_remove(struct agent_spool *spool, size_t index);

/* Says what was dropped and what stays behind; frees the list. */
void agent_spool_close(struct agent_spool *spool);

#endif
