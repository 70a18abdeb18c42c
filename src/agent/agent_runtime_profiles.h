/* A period's profiles of a .NET process's runtime events (lock contention,
 * exceptions, allocations: runtime_profiles.h), from its part of the
 * agent's sessions (agent_runtime_sessions.h), and what each is called
 * when pushed: as Pyroscope's own .NET profiler names the same, so that
 * its UI shows them beside the CPU profile. */
#ifndef PROFCPU_AGENT_RUNTIME_PROFILES_H
#define PROFCPU_AGENT_RUNTIME_PROFILES_H

#include "agent_runtime_sessions.h"
#include "emit.h"
#include "resolver.h"
#include "runtime_profiles.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A .NET process's runtime events of a period, as profiles. */
struct agent_runtime_period {
	struct agent_runtime_part part;
	struct runtime_profile profiles[RUNTIME_STACK_KINDS]; /* when `read` */
	bool read; /* false: its nettrace could not be read (said in the log) */
};

/* The runtime events of period number `period` of each process `sessions`
 * records (`*count` of them; agent_runtime_periods_release), waiting for
 * the period's cut as agent_runtime_sessions_take does for `seconds`:
 * each part's nettrace read (hostile input: bounded as runtime_trace.h
 * bounds it), its events within its times kept, their stacks named with
 * `resolver`, which has replayed the period's samples, each sample's
 * process and thread named as the process (the events carry no names). */
struct agent_runtime_period *agent_runtime_periods_read(struct agent_runtime_sessions *sessions,
							unsigned long period, double seconds,
							struct resolver *resolver, FILE *log,
							size_t *count);

/* Frees the profiles and removes the parts' nettraces. */
void agent_runtime_periods_release(struct agent_runtime_period *periods, size_t count);

/* Whether `period` holds events of some kind. */
bool agent_runtime_period_has_events(const struct agent_runtime_period *period);

/* The gzipped pprof profile (malloc'd, `*size` bytes) of `profile`, of
 * `kind`, dated by its events' times plus `wall_clock_offset` (Unix time
 * minus the CPU samples' clock, which the runtime's events share); NULL
 * when out of memory. */
unsigned char *agent_runtime_profile_encode(const struct runtime_profile *profile,
					    enum runtime_stack_kind kind, int64_t wall_clock_offset,
					    size_t *size);

/* The profile's name for Pyroscope (its __name__): memory, lock,
 * exception, and wait for waits on wait handles. */
const char *agent_runtime_profile_name(enum runtime_stack_kind kind);

#endif
