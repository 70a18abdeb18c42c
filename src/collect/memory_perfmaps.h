/* The names of every .NET process's JIT code read from its runtime's
 * memory while a capture of every process is sampled (collect -a,
 * --cgroup, --container): at a process's first sample, where its runtime
 * has a contract descriptor (.NET 10 and later), a memory_perfmap.h of its
 * own names what its perf map leaves unnamed (the capture's
 * perf-<pid>.memory.map, read by the replay after the process's own perf
 * map and jitdump), each with its own budget of a tenth of each second
 * and all together within the same (a sample past it is not looked up).
 * A process is looked at again while it is sampled: once a second whether
 * its pid is another process's now (which is judged anew), and, where no
 * runtime was read, after 1, 2, 4 ... 64 s whether it reads now (a runtime
 * loaded after the first sample). */
#ifndef PROFCPU_MEMORY_PERFMAPS_H
#define PROFCPU_MEMORY_PERFMAPS_H

#include "perf_data.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct memory_perfmaps;

struct memory_perfmaps *memory_perfmaps_new(void);

/* Writes into `dir` from now on (appending to what an earlier capture into
 * it wrote), and what each process's lookups found into `log`, at its exit
 * or the capture's end. */
void memory_perfmaps_start(struct memory_perfmaps *maps, const char *dir, FILE *log);

/* As memory_perfmap_sample(), for the process of `sample`. */
void memory_perfmaps_sample(struct memory_perfmaps *maps, const struct perf_sample *sample,
			    const uint64_t *walked, size_t walked_count);

/* Closes the files started, saying in `log` what each process's lookups
 * found. */
void memory_perfmaps_stop(struct memory_perfmaps *maps, FILE *log);

void memory_perfmaps_free(struct memory_perfmaps *maps);

#endif
