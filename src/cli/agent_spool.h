/* The agent's buffer of periods: one folder per period in the spool
 * folder, oldest first, each holding the period's perf.data until a sender
 * turns it into one profile per process, then those profiles until the
 * receiver takes them. At most `max_periods` wait; past that the oldest
 * go, and the first time that happens one line says so.
 *
 * A sender is a child process (fork): it encodes and pushes while the
 * agent samples on, and a crash there, on a hostile file of some process,
 * cannot take the agent down. One runs at a time; each takes every period
 * waiting, oldest first, and stops at the first push the receiver cannot
 * take now (down, too slow, 5xx): those periods stay for the next one. */
#ifndef PROFCPU_AGENT_SPOOL_H
#define PROFCPU_AGENT_SPOOL_H

#include "agent_send.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct agent_spool {
	const char *dir;
	size_t max_periods;
	const struct agent_send_options *send;
	char **periods; /* folders waiting, oldest first */
	size_t count, capacity;
	unsigned sequence;
	pid_t sender; /* 0: none running */
	bool receiver_down, said_dropping;
	unsigned long long dropped, sent_rounds;
};

/* Makes the spool folder and takes the periods an earlier run left there.
 * Returns 0, or -1 after saying why. */
int agent_spool_open(struct agent_spool *spool);

/* A new folder for the next period's perf.data (malloc'd), or NULL after
 * saying why. */
char *agent_spool_new_period(struct agent_spool *spool);

/* `dir` (from agent_spool_new_period) is finished: it waits for a sender;
 * one starts unless one runs. */
void agent_spool_add(struct agent_spool *spool, const char *dir);

/* At the end: waits for the running sender, then sends what waits once
 * more and waits for that too. Says what stays behind. */
void agent_spool_finish(struct agent_spool *spool);

void agent_spool_close(struct agent_spool *spool);

#endif
