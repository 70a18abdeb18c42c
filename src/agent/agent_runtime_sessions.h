/* The agent's EventPipe sessions (eventpipe_session.h): one for each .NET
 * process the agent profiles, cut at each period's end so that each
 * period's runtime events (lock waits, exceptions, allocations) come in a
 * nettrace of their own. A nettrace is not cut into parts that stand
 * alone, so each cut starts a new session and then stops the old one (no
 * rundown: the perf map the agent turned on names the frames). The two
 * overlap; the moment between the new one's start and the old one's stop
 * is the cut, and each event belongs to the part its time falls in: none
 * is lost or counted twice.
 *
 * The sessions are started and stopped by a thread of their own: a
 * process whose socket stalls holds up that thread, never the worker's
 * pushes; a part not ready in time is dropped, said in the log. */
#ifndef PROFCPU_AGENT_RUNTIME_SESSIONS_H
#define PROFCPU_AGENT_RUNTIME_SESSIONS_H

#include "eventpipe_session.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct agent_runtime_sessions;

/* A part of a process's events: its nettrace, and the CLOCK_MONOTONIC
 * nanoseconds its events are kept within, [from, until). */
struct agent_runtime_part {
	pid_t pid;
	char comm[16]; /* its process's name when its session began */
	char *path;    /* malloc'd; the caller removes the file */
	uint64_t from, until;
};

/* Starts the thread; the nettraces go into `dir` (the agent's spool
 * folder: those an earlier worker left are removed), each at most 64 MiB
 * (the rest of a period's events dropped).
 * `log`: the worker's log. */
struct agent_runtime_sessions *agent_runtime_sessions_start(const struct eventpipe_config *config,
							    const char *dir, FILE *log);

/* Records the runtime events of the .NET process `pid` from now on, until
 * it exits (or refuses a session: said once on stderr). */
void agent_runtime_sessions_watch(struct agent_runtime_sessions *sessions, pid_t pid);

/* Period number `period` ended: each session's events so far become its
 * part of that period. Returns at once. */
void agent_runtime_sessions_cut(struct agent_runtime_sessions *sessions, unsigned long period);

/* The parts of period number `period` (malloc'd, `*count` of them; free
 * each path and the array), waiting for its cut until `seconds` after the
 * cut being made began (at once when one has taken that long already);
 * none when it is not done (its parts are then dropped). */
struct agent_runtime_part *agent_runtime_sessions_take(struct agent_runtime_sessions *sessions,
						       unsigned long period, double seconds,
						       size_t *count);

/* Stops every session and the thread; their parts not taken are removed. */
void agent_runtime_sessions_stop(struct agent_runtime_sessions *sessions);

#endif
