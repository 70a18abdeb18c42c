/* One pprof profile per process of a capture of every process: what
 * profcpu agent sends each period. */
#ifndef PROFCPU_PROCESS_PROFILES_H
#define PROFCPU_PROCESS_PROFILES_H

#include "emit.h"
#include "resolver.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A process is its pid and its generation (profile.h): a pid reused, or a
 * process that execs another program, within the capture gives profiles
 * of their own. */
struct process_profile {
	pid_t pid;
	uint32_t generation;   /* 0: the capture's first process of the pid */
	bool last_of_pid;      /* no other process took its pid later in the capture */
	char process_name[16]; /* its comm, control characters as '?' */
	size_t samples;
	unsigned char *data; /* the gzipped pprof profile (malloc'd), or NULL */
	size_t size;
	struct pprof_span span; /* what it covers */
};

/* Replays `perf_data`, naming frames with `resolver`, and makes a pprof
 * profile for each process that has samples (not the idle task), in the
 * order their first samples came, dated by
 * when perf.data was finished. Returns how many were put in `*profiles`
 * (malloc'd; free with process_profiles_free), or -1 after printing why
 * the capture could not be read. */
long process_profiles_make(const char *perf_data, struct resolver *resolver,
			   struct process_profile **profiles);

void process_profiles_free(struct process_profile *profiles, size_t count);

#endif
