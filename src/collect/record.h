/* Sampling a process with perf_event_open: the cpu-clock software event at a
 * fixed frequency with kernel frame-pointer callchains, on every thread of
 * the process, including threads born during the run (inherited events). */
#ifndef PROFCPU_RECORD_H
#define PROFCPU_RECORD_H

#include "perf_call_graph.h"
#include "synthesize.h"
#include "target_process.h"

#include <stdbool.h>
#include <stdint.h>

struct record_options {
	double duration;    /* seconds; 0 records until Ctrl-C or the target exits */
	unsigned frequency; /* samples per second of CPU time, per thread */
	bool show_progress; /* a progress line on stderr */
	/* Continuous sampling: every `period` seconds (0: never) the records
	 * so far are closed off by `end_period` (the sink starts a new file),
	 * then the synthesized records are emitted again for the new one.
	 * Sampling stays enabled throughout. It gets the sink's context; a
	 * negative return stops as a write error, a positive one as the
	 * caller chose (RECORD_STOPPED_BY_CALLER): the records after the
	 * period's end are not passed on. */
	double period;
	int (*end_period)(void *context);
};

enum record_stop_reason {
	RECORD_STOPPED_BY_DURATION,
	RECORD_STOPPED_BY_SIGNAL,
	RECORD_STOPPED_BY_TARGET_EXIT,
	RECORD_STOPPED_BY_WRITE_ERROR,
	RECORD_STOPPED_BY_CALLER, /* end_period asked for the end */
};

struct record_summary {
	uint64_t samples, lost_samples;
	unsigned threads_seen;
	double elapsed_seconds;
	bool kernel_frames;  /* false when the kernel refused kernel samples */
	unsigned ring_pages; /* per CPU: fewer than asked where the locked-memory limit said so */
	enum record_stop_reason stop_reason;
};

/* The event attributes profcpu records with, for the call-graph mode
 * `call_graph` with a user stack copy of `stack_size` bytes (dwarf and
 * hybrid modes). */
void record_default_attr(struct perf_event_attr *attr, unsigned frequency,
			 enum call_graph_mode call_graph, unsigned stack_size);

/* Switches `attr` to the CPU-cycles hardware event when this machine can
 * sample `pid` with it. Returns 0, or the errno of perf_event_open (ENOENT,
 * EOPNOTSUPP: no PMU, e.g. in most virtual machines) leaving `attr` as it
 * was. */
int record_use_cpu_cycles(struct perf_event_attr *attr, pid_t pid);

struct record_session;

/* The events of a session: the sampling one, and the switch event
 * (switch_events.h) when off-CPU time is recorded. */
enum { RECORD_EVENT_SAMPLING, RECORD_EVENT_SWITCH, RECORD_EVENT_COUNT };

/* The kernel's ids of one event's file descriptors (PERF_EVENT_IOC_ID),
 * which samples carry with PERF_SAMPLE_IDENTIFIER. Only kept when a
 * session has two events. */
struct record_event_ids {
	uint64_t *ids;
	size_t count, capacity;
};

/* Opens the events on every thread of `target`, disabled: `attr`, and
 * `switch_attr` (switch_events.h) too unless NULL. When the kernel refuses
 * kernel samples, excludes them and says so in `attr` and `switch_attr`,
 * which then hold the attributes every record was made with. Returns NULL after printing why
 * sampling cannot start and what to do about it. */
struct record_session *record_open(const struct target_process *target,
				   struct perf_event_attr *attr,
				   struct perf_event_attr *switch_attr, unsigned buffer_pages);

/* The ids of event `event` (RECORD_EVENT_SAMPLING or _SWITCH). */
const struct record_event_ids *record_event_ids(const struct record_session *session, size_t event);

/* Emits the synthesized records, enables sampling and passes every record to
 * `sink` until the duration ends, SIGINT or SIGTERM arrives, the target exits
 * or the sink fails. */
void record_run(struct record_session *session, const struct record_options *options,
		record_sink sink, void *context, struct record_summary *summary);

void record_close(struct record_session *session);

#endif
