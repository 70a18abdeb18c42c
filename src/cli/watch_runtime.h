/* The .NET half of profcpu watch: the watched process's runtime events
 * through an EventPipe session cut at each of the ring's periods (the
 * agent's sessions, agent_runtime_sessions.h), each period's part read as
 * soon as it is cut for the rules (exceptions thrown, the longest GC
 * pause, the lock wait, the thread pool's queue from the runtime's
 * counters when asked), and kept beside the ring's samples for as long as
 * a capture may need them. The parts kept on disk stay within
 * WATCH_RUNTIME_MAX_BYTES (the oldest dropped first, said in the log). */
#ifndef PROFCPU_WATCH_RUNTIME_H
#define PROFCPU_WATCH_RUNTIME_H

#include "runtime_trace.h"
#include "target_process.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WATCH_RUNTIME_MAX_BYTES ((uint64_t)256 << 20)

/* What a period's events say, over [from, until) (CLOCK_MONOTONIC
 * nanoseconds). */
struct watch_runtime_period {
	uint64_t from, until;
	uint64_t exceptions;	    /* thrown */
	double longest_gc_pause_ms; /* 0: no GC */
	double contention_ms;	    /* waited for locks, all threads together */
	/* The runtime's threadpool-queue-length counter, its highest value
	 * (only with the counters, and when one came). */
	bool has_threadpool_queue;
	double threadpool_queue;
};

/* A part of the events kept: its nettrace and its times. */
struct watch_runtime_part {
	char *path;
	uint64_t from, until;
	uint64_t bytes;
};

struct watch_runtime;

/* Starts recording the runtime events of `target` (a .NET process with a
 * diagnostics socket), with System.Runtime's counters when `counters`,
 * its parts in `ring_dir`, the sessions' lines in the log at `log_path`
 * (written anew, started again past 1 MiB). Returns NULL after one line
 * when the log cannot be written. */
struct watch_runtime *watch_runtime_start(const struct target_process *target, const char *ring_dir,
					  const char *log_path, bool counters);

/* The ring's period number `period` ended: its events are cut, and those of
 * the period before, cut a period ago, are read into `*read` (false when
 * none came: the session is not there yet, or its part was late). With
 * `wait_seconds`, both parts are waited for that long, the period's own
 * kept too (the last period, before a capture cut short). */
bool watch_runtime_next_period(struct watch_runtime *runtime, unsigned long period,
			       double wait_seconds, struct watch_runtime_period *read);

/* The end of the newest part kept: the events before it are all there. */
uint64_t watch_runtime_kept_until(const struct watch_runtime *runtime);

/* Removes the parts that ended before `keep_from`. */
void watch_runtime_drop_before(struct watch_runtime *runtime, uint64_t keep_from);

/* The parts that overlap [from, to], oldest first (`*count` of them; the
 * array and its paths are the runtime's, valid until its next change). */
const struct watch_runtime_part *watch_runtime_parts(const struct watch_runtime *runtime,
						     uint64_t from, uint64_t to, size_t *count);

/* The events of the `count` parts of a capture, `dir`/runtime-1.nettrace
 * and on (the capture's links to `parts`, which give their times), within
 * [from, to], as one trace for the capture's outputs
 * (postprocess_capture): each part's stacks within its times and the
 * window (at most a million events, 16 Mi frames: said in `log` when
 * more) and their GCs. Returns 0, or -1 when no part could be read (said
 * in `log`); release `joined` (runtime_trace_release) in both cases. */
int watch_runtime_trace_read(const char *dir, const struct watch_runtime_part *parts, size_t count,
			     uint64_t from, uint64_t to, FILE *log, struct runtime_trace *joined);

/* Stops the sessions and removes every part. */
void watch_runtime_stop(struct watch_runtime *runtime);

#endif
