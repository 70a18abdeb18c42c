/* Writes every output of a capture folder from its symbolized profile:
 * folded_stacks.out, perf_script.out, flamegraph.svg, and prof.tar.gz
 * holding them with perf.data and the perf map copies. */
#ifndef PROFCPU_OUTPUTS_H
#define PROFCPU_OUTPUTS_H

#include "profile.h"

/* Returns 0, or -1 after printing which outputs could not be written (the
 * others are still written). */
int outputs_write(const char *dir, const struct profile *profile);

#endif
