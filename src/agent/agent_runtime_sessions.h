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
 * Each process's sessions are started and cut by a thread of its own: a
 * process whose socket stalls holds up its own thread, never another
 * process's cuts nor the worker's pushes; its part not ready in time is
 * dropped, said in the log. At most 128 processes are recorded at once.
 * A period's nettraces stay within 64 MiB a process and 256 MiB all
 * together, each process's first MiB its own (eventpipe_budget). */
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

/* The sessions, none yet; the nettraces go into `dir` (the agent's spool
 * folder: those an earlier worker left are removed), new files only root
 * reads, within the bounds above (the rest of a period's events dropped,
 * said in `log`, the worker's log). */
struct agent_runtime_sessions *agent_runtime_sessions_start(const struct eventpipe_config *config,
							    const char *dir, FILE *log);

/* Records the runtime events of the .NET process `pid` from now on, until
 * it exits (or refuses a session: said once on stderr), from a thread of
 * its own (none past the most at once: said in the log). */
void agent_runtime_sessions_watch(struct agent_runtime_sessions *sessions, pid_t pid);

/* Period number `period` ended: each session's events so far become its
 * part of that period. Returns at once. */
void agent_runtime_sessions_cut(struct agent_runtime_sessions *sessions, unsigned long period);

/* The parts of period number `period` (malloc'd, `*count` of them; free
 * each path and the array), waiting for each process's cut until `seconds`
 * after it was asked (not for a process still held up by an earlier cut);
 * a process's part not ready then is dropped, said in the log. */
struct agent_runtime_part *agent_runtime_sessions_take(struct agent_runtime_sessions *sessions,
						       unsigned long period, double seconds,
						       size_t *count);

/* Stops every session and thread (waiting for cuts being made); their
 * parts not taken are removed. */
void agent_runtime_sessions_stop(struct agent_runtime_sessions *sessions);

#endif
