/* The processes of a capture of every process, and pprof profiles of any
 * set of them: profcpu agent sends one profile a series each period, the
 * processes of a workload together. */
#ifndef PROFCPU_PROCESS_PROFILES_H
#define PROFCPU_PROCESS_PROFILES_H

#include "emit.h"
#include "profile.h"
#include "resolver.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A process is its pid and its generation (profile.h): a pid reused, or a
 * process that execs another program, within the capture is a process of
 * its own. */
struct process_profile {
	pid_t pid;
	uint32_t generation;   /* 0: the capture's first process of the pid */
	bool last_of_pid;      /* no other process took its pid later in the capture */
	char process_name[16]; /* its comm, control characters as '?' */
	size_t samples;
};

struct process_part; /* its samples and locations in the profile */

struct process_profiles {
	struct profile profile;
	int64_t wall_clock_offset;	   /* Unix time minus the samples' time */
	struct process_profile *processes; /* in the order their first samples came */
	struct process_part *parts;
	size_t count;
};

/* Replays `perf_data`, naming frames with `resolver`, and lists each
 * process that has samples (not the idle task) and that `takes` takes
 * (NULL: every one; profile.h's takes_process). Returns 0, or -1 after
 * printing why the capture could not be read (then nothing to release). */
int process_profiles_read(const char *perf_data, struct resolver *resolver,
			  bool (*takes)(uint32_t pid, void *context), void *context,
			  struct process_profiles *profiles);

/* The gzipped pprof profile (malloc'd, in `*data`, `*size`) of the
 * processes numbered `members` (`member_count` of them), each sample
 * labelled with its pid, process and thread; what it covers in `*span`.
 * Returns 0, or -1 (out of memory). */
int process_profiles_encode(const struct process_profiles *profiles, const size_t *members,
			    size_t member_count, unsigned char **data, size_t *size,
			    struct pprof_span *span);

/* The samples of process `index`: their indices in the profile, in time
 * order. */
struct process_samples {
	const uint32_t *samples;
	size_t sample_count;
};
struct process_samples process_profiles_samples(const struct process_profiles *profiles,
						size_t index);

void process_profiles_release(struct process_profiles *profiles);

#endif
