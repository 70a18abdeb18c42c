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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reads the nettrace of `part` (hostile input: bounded as
 * runtime_trace.h bounds it), keeps the events within its times and names
 * their stacks with `resolver`, which has replayed the period's samples;
 * each sample's process and thread are named as the process (the events
 * carry no names). Fills profiles[kind] for every kind (release them
 * all). Returns 0, or -1
 * after saying in `log` why the part could not be read (nothing to
 * release). */
int agent_runtime_profiles_read(const struct agent_runtime_part *part, struct resolver *resolver,
				struct runtime_profile profiles[RUNTIME_STACK_KINDS], FILE *log);

/* The gzipped pprof profile (malloc'd, `*size` bytes) of `profile`, of
 * `kind`, dated `end_time_nanos` (Unix time); NULL when out of memory. */
unsigned char *agent_runtime_profile_encode(const struct runtime_profile *profile,
					    enum runtime_stack_kind kind, int64_t end_time_nanos,
					    size_t *size);

/* The profile's name for Pyroscope (its __name__): memory, lock,
 * exception, and wait for waits on wait handles. */
const char *agent_runtime_profile_name(enum runtime_stack_kind kind);

#endif
