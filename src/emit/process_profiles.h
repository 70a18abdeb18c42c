/* One pprof profile per process of a capture of every process: what
 * profcpu agent sends each period. */
#ifndef PROFCPU_PROCESS_PROFILES_H
#define PROFCPU_PROCESS_PROFILES_H

#include "resolver.h"

#include <stddef.h>
#include <sys/types.h>

struct process_profile {
	pid_t pid;
	char process_name[16]; /* its comm, control characters as '?' */
	size_t samples;
	char *path; /* DIR/PID.pb.gz, malloc'd */
};

/* Replays DIR/perf.data, naming frames with `config`, and writes
 * DIR/PID.pb.gz for each process that has samples (not the idle task), dated by when
 * perf.data was finished. Returns how many were put in `*profiles`
 * (malloc'd; free with process_profiles_free), or -1 after printing why
 * the capture could not be read. */
long process_profiles_write(const char *dir, const struct resolver_config *config,
			    struct process_profile **profiles);

void process_profiles_free(struct process_profile *profiles, size_t count);

#endif
