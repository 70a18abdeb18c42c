/* Writes every output of a capture folder from its symbolized profile:
 * folded_stacks.out, perf_script.out, flamegraph.svg, prof.tar.gz holding
 * them with perf.data and the runtime symbol files (perf map, jitdump), and
 * a NAME.trace.zip in perfcollect's layout for PerfView. */
#ifndef PROFCPU_OUTPUTS_H
#define PROFCPU_OUTPUTS_H

#include "emit.h"
#include "profile.h"
#include "runtime_events.h"
#include "runtime_profiles.h"

/* Where the perfcollect zip goes. */
struct trace_zip {
	const char *path; /* NULL: DIR/prof.trace.zip */
	const char *name; /* the zip's top folder is NAME.trace; NULL: "prof" */
};

/* The .NET runtime's events of the capture (collect writes it), in both
 * archives; the flame graph's subtitle carries its GC pauses. */
#define OUTPUTS_RUNTIME_EVENTS "runtime.nettrace"

/* `zip` and `fold` (how folded stacks and the flame graph name and group
 * frames) may be NULL for the defaults; `events`, the runtime's events of
 * the capture, too (NULL: none), and `runtime`, the profiles of its events
 * with stacks, by kind (NULL: none): contention.pb.gz,
 * contention_folded_stacks.out (nanoseconds), contention_flamegraph.svg,
 * and the same of waits (nanoseconds), exceptions (counts) and alloc
 * (bytes), each where it has events. Returns 0, or -1 after printing which outputs could not be
 * written (the others are still written). */
int outputs_write(const char *dir, const struct profile *profile, const struct trace_zip *zip,
		  const struct fold_options *fold, const struct runtime_events *events,
		  const struct runtime_profile *runtime);

/* Only the two archives, of whatever the folder holds (a capture of runtime
 * events without samples). Returns 0 or -1 as outputs_write. */
int outputs_write_archives(const char *dir, const struct trace_zip *zip);

/* The pprof profile of `runtime`, the profile of the runtime's events of
 * `kind`, gzip-compressed into `out`, as NAME.pb.gz holds it (sample types
 * as Go names the same: alloc_objects and alloc_space, contentions and
 * delay, exceptions), dated `end_time_nanos` (Unix time). Returns 0 or -1. */
int outputs_write_runtime_pprof(const struct runtime_profile *runtime, enum runtime_stack_kind kind,
				int64_t end_time_nanos, FILE *out);

/* The pprof sample types of the runtime profile of `kind` (its counts
 * NULL). */
const struct pprof_values *outputs_runtime_values(enum runtime_stack_kind kind);

/* DIR/flamegraph.svg when outputs_write() drew one (not without samples),
 * else NULL; freed by the caller. */
char *outputs_flamegraph_path(const char *dir);

/* Tells the user on stdout where the flame graph (when one was drawn) and
 * the trace for PerfView are. */
void outputs_print_where(const char *dir);

#endif
