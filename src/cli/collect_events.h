/* The runtime-events half of collect: the EventPipe session beside the
 * samples (or instead of them, -noperf) and its summary at the end. */
#ifndef PROFCPU_COLLECT_EVENTS_H
#define PROFCPU_COLLECT_EVENTS_H

#include "eventpipe_session.h"
#include "outputs.h"
#include "runtime_trace.h"

#include <stdio.h>

/* Starts the session into DIR/runtime.nettrace; NULL when there is none
 * (the target is not .NET, or a warning said why). */
struct eventpipe_session *collect_events_start(const struct target_process *target,
					       const struct eventpipe_config *config,
					       const char *dir, FILE *log);

/* -noperf: records events only, until the duration ends, Ctrl-C, or the
 * target exits. Returns 0, or -1 after saying nothing can be recorded. */
int collect_events_only(struct eventpipe_session *session, const struct target_process *target,
			double duration, FILE *log);

/* Stops the session (NULL: nothing), reads its file once and prints what
 * its events say, on stdout and in the log. The file's reading is left in
 * `trace` for the outputs (release it; status -1 without a session), or
 * released when `trace` is NULL. */
void collect_events_finish(struct eventpipe_session *session, const char *dir, FILE *log,
			   struct runtime_trace *trace);

#endif
