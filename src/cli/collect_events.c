#include "collect_events.h"
#include "runtime_trace.h"
#include "util.h"

#include <stdlib.h>

struct eventpipe_session *collect_events_start(const struct target_process *target,
					       const struct eventpipe_config *config,
					       const char *dir, FILE *log)
{
	char *path = xasprintf("%s/%s", dir, OUTPUTS_RUNTIME_EVENTS);
	struct eventpipe_session *session = eventpipe_session_start(target, config, path, log);

	free(path);
	return session;
}

int collect_events_only(struct eventpipe_session *session, const struct target_process *target,
			double duration, FILE *log)
{
	const char *stopped;

	if (!session) {
		report_error("-noperf: pid %d gives no runtime events (it is not a .NET process, "
			     "or see above) and no samples were asked for: nothing to record",
			     (int)target->pid);
		return -1;
	}
	fprintf(stderr, "profcpu: recording the runtime events of pid %d (%s), no samples%s\n",
		(int)target->pid, target->comm, duration > 0 ? "" : "; Ctrl-C stops");
	stopped = eventpipe_session_wait(session, duration);
	fprintf(log, "stopped: %s\n", stopped);
	fprintf(stderr, "profcpu: stopped: %s\n", stopped);
	return 0;
}

void collect_events_finish(struct eventpipe_session *session, const char *dir, FILE *log,
			   struct runtime_trace *trace)
{
	struct runtime_trace own;
	char *path;

	if (!trace)
		trace = &own;
	*trace = (struct runtime_trace){.status = -1};
	if (!session)
		return;
	eventpipe_session_stop(session, log);
	path = xasprintf("%s/%s", dir, OUTPUTS_RUNTIME_EVENTS);
	if (runtime_trace_read(path, trace) < 0 && !trace->events.events)
		report_warning("no runtime events to summarize in %s: %s", path, trace->why);
	else {
		if (trace->status < 0)
			report_warning("%s is damaged (%s): the summary holds the events before",
				       path, trace->why);
		else if (trace->events.info.truncated)
			report_warning("%s ends early (the session was cut short): the summary "
				       "holds the events it has",
				       path);
		runtime_events_print(&trace->events, stdout);
		runtime_events_print(&trace->events, log);
	}
	if (trace == &own)
		runtime_trace_release(&own);
	free(path);
}
