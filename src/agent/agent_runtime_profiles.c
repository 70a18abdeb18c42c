#include "agent_runtime_profiles.h"
#include "outputs.h"
#include "runtime_trace.h"
#include "util.h"

#include <stdlib.h>
#include <unistd.h>

/* Reads the nettrace of `part` into profiles[kind] for every kind (release
 * them all). Returns 0, or -1 after saying in `log` why it could not be
 * read (nothing to release). */
static int read_part(const struct agent_runtime_part *part, struct resolver *resolver,
		     struct runtime_profile profiles[RUNTIME_STACK_KINDS], FILE *log)
{
	struct runtime_trace trace;
	struct runtime_stacks kept;
	int status = runtime_trace_read(part->path, &trace);

	/* A trace cut short (its process exited) still gives what it holds. */
	if (status < 0 && !trace.stacks.count) {
		fprintf(log, "runtime events of pid %d: %s\n", (int)part->pid, trace.why);
		runtime_trace_release(&trace);
		return -1;
	}
	/* Its events of the period: the sessions before and after it hold the
	 * others. */
	kept = trace.stacks;
	kept.events = xcalloc(trace.stacks.count + 1, sizeof(*kept.events));
	kept.count = 0;
	for (size_t i = 0; i < trace.stacks.count; i++) {
		const struct runtime_stack_event *event = &trace.stacks.events[i];

		if (event->time >= part->from && event->time < part->until)
			kept.events[kept.count++] = *event;
	}
	runtime_profiles_build(&kept, resolver, part->pid, NULL, profiles);
	/* The events name no process nor thread: each sample is its
	 * process's, by the name it had when its session began. */
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++) {
		struct profile *profile = &profiles[kind].profile;
		const char *name = profile_intern_printable(profile, part->comm);

		for (size_t i = 0; i < profile->sample_count; i++)
			profile->samples[i].process_name = profile->samples[i].thread_name = name;
	}
	free(kept.events);
	runtime_trace_release(&trace);
	return 0;
}

struct agent_runtime_period *agent_runtime_periods_read(struct agent_runtime_sessions *sessions,
							unsigned long period, double seconds,
							struct resolver *resolver, FILE *log,
							size_t *count)
{
	struct agent_runtime_part *parts =
	    agent_runtime_sessions_take(sessions, period, seconds, count);
	struct agent_runtime_period *periods = xcalloc(*count + 1, sizeof(*periods));

	for (size_t i = 0; i < *count; i++) {
		periods[i].part = parts[i];
		periods[i].read = read_part(&parts[i], resolver, periods[i].profiles, log) == 0;
	}
	free(parts);
	return periods;
}

void agent_runtime_periods_release(struct agent_runtime_period *periods, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (periods[i].read)
			runtime_profiles_release(periods[i].profiles);
		unlink(periods[i].part.path);
		free(periods[i].part.path);
	}
	free(periods);
}

bool agent_runtime_period_has_events(const struct agent_runtime_period *period)
{
	for (int kind = 0; period->read && kind < RUNTIME_STACK_KINDS; kind++)
		if (period->profiles[kind].profile.sample_count)
			return true;
	return false;
}

unsigned char *agent_runtime_profile_encode(const struct runtime_profile *profile,
					    enum runtime_stack_kind kind, int64_t wall_clock_offset,
					    size_t *size)
{
	char *data = NULL;
	FILE *out = open_memstream(&data, size);
	uint64_t last = 0;
	bool written;

	if (!out)
		return NULL;
	for (size_t i = 0; i < profile->profile.sample_count; i++)
		if (profile->profile.samples[i].time > last)
			last = profile->profile.samples[i].time;
	/* Ends with its last event: pprof dates it by its first. */
	written =
	    outputs_write_runtime_pprof(profile, kind, (int64_t)last + wall_clock_offset, out) == 0;
	if (fclose(out) != 0 || !written) {
		free(data);
		return NULL;
	}
	return (unsigned char *)data;
}

const char *agent_runtime_profile_name(enum runtime_stack_kind kind)
{
	static const char *const names[RUNTIME_STACK_KINDS] = {
	    [RUNTIME_STACK_CONTENTION] = "lock",
	    [RUNTIME_STACK_EXCEPTION] = "exception",
	    [RUNTIME_STACK_ALLOCATION] = "memory",
	    [RUNTIME_STACK_WAIT] = "wait",
	};

	return names[kind];
}
