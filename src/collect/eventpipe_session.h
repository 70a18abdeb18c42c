/* The .NET runtime's own events beside the samples: an EventPipe session
 * opened through the target's diagnostics socket (CollectTracing2 of the
 * IPC protocol), its nettrace stream written as it comes into a file, and
 * stopped with StopTracing. The runtime ends a session whose connection
 * closes, so a profiler that dies leaves the target as it was. */
#ifndef PROFCPU_EVENTPIPE_SESSION_H
#define PROFCPU_EVENTPIPE_SESSION_H

#include "target_process.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Event levels of EventPipe (as ETW's). */
#define EVENTPIPE_LEVEL_INFORMATIONAL 4
#define EVENTPIPE_LEVEL_VERBOSE	      5

#define EVENTPIPE_MAX_PROVIDERS 16

struct eventpipe_provider {
	char name[128]; /* e.g. Microsoft-Windows-DotNETRuntime */
	uint64_t keywords;
	uint32_t level;
	/* The provider's arguments, "Key=Value;..." (an EventSource's
	 * EventCounterIntervalSec=1); "": none. */
	char filter[64];
};

/* A bound on the bytes of several sessions together (the agent's, of one
 * period): each session's first `own_bytes` are its own (the owner keeps
 * room for them), the bytes past them drawn from `shared_bytes` that all
 * share, first come first served. */
struct eventpipe_budget {
	uint64_t own_bytes, shared_bytes;
	atomic_uint_fast64_t shared_used;
};

/* What to ask the runtime for, and where its events go. */
struct eventpipe_config {
	struct eventpipe_provider providers[EVENTPIPE_MAX_PROVIDERS];
	size_t provider_count;
	bool rundown; /* the runtime's method and module rundown when it stops */
	/* Past this many bytes the stream is no longer read (the file ends
	 * cut short, as a nettrace of a stopped session may); 0: no bound. */
	uint64_t max_bytes;
	struct eventpipe_budget *budget; /* drawn from past max_bytes' check; NULL: none */
	/* The file is new and the profiler's alone (O_EXCL, 0600: the
	 * agent's spool), not an output that replaces an older one (0644). */
	bool private_file;
};

struct eventpipe_session;

/* When `target` runs .NET, opens a session with `config` and streams it into
 * `path` (never through a symbolic link) from a thread of its own. Returns NULL when the target is
 * not .NET (silently) or after one line on stderr and in `log` saying why no events are recorded
 * (no diagnostics socket, a runtime without EventPipe, a refused request); the samples do not
 * depend on it. */
struct eventpipe_session *eventpipe_session_start(const struct target_process *target,
						  const struct eventpipe_config *config,
						  const char *path, FILE *log);

/* Waits until `seconds` pass (0: no limit), SIGINT or SIGTERM arrives, the
 * target exits or the runtime ends the stream: the capture loop of a
 * collection without samples. Returns what stopped it, for the log. */
const char *eventpipe_session_wait(struct eventpipe_session *session, double seconds);

/* Stops the session (StopTracing), lets the runtime send its rundown,
 * closes the file and frees the session. A session the runtime will not
 * stop is closed from this side, which ends it too; one line says so. A
 * stream cut short by max_bytes or the budget is said in `log`.
 * Returns the bytes written to the file. */
uint64_t eventpipe_session_stop(struct eventpipe_session *session, FILE *log);

#endif
