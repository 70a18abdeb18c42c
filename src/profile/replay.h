/* From a capture (perf.data) to a symbolized profile: the records are put in
 * time order, the side records (COMM, FORK, MMAP) rebuild each process's
 * threads and mappings, and every sample's callchain becomes a stack of
 * named locations. */
#ifndef PROFCPU_REPLAY_H
#define PROFCPU_REPLAY_H

#include "profile.h"
#include "resolver.h"

/* Reads `perf_data_path` into `profile` (profile_init() first), naming
 * frames with `resolver`. Returns 0, or -1 after printing why. */
int replay_capture(const char *perf_data_path, struct resolver *resolver, struct profile *profile);

#endif
