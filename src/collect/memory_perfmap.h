/* The names of a .NET target's JIT code read from its runtime's memory
 * while it is sampled (symbols/runtime_memory), for a target whose
 * diagnostics IPC does not answer (DOTNET_EnableDiagnostics=0) or when
 * asked (collect --names memory): nothing is asked of the runtime and
 * nothing written in it.
 *
 * Each JIT address of a sample is looked up as the sample is read, so the
 * name is that of the code there at the sample's time (code of dynamic
 * methods is freed and reused). What is found goes into the capture folder
 * as the runtime's own perf map copy would (runtime_files.h):
 * perf-<pid>.map, "0xSTART SIZE NAME" with the runtime's form of the name,
 * and perf-<pid>.map.times, "BYTES NANOSECONDS" (by the sample's time the
 * map held that many bytes). The replay and every output read them as they
 * read a perf map. A line covers the method's code from its start to the
 * furthest address sampled in it so far; a sample further in writes a
 * longer line.
 *
 * Cost: a method's code, once found, is known without reading the target
 * again for ten seconds, then looked up once more (its code may have been
 * freed and reused); a dynamic method's, whose code is freed and reused
 * as the app runs, is looked up at each sample; an address of no method
 * is looked up once in ten seconds (runtime_code_cache.h keeps them).
 * Lookups take at most MEMORY_PERFMAP_LOOKUP_SHARE of each second of the
 * collector's CPU, and MEMORY_PERFMAP_WALL_SHARE of its wall time
 * (lookup_budget.h), each read bounded (target_memory.h): a runtime with
 * corrupt or planted structures costs that, and names nothing it cannot
 * check. An address the
 * budget leaves unlooked (up to 4,096 at once) is looked up in a later
 * second with time left, for its sample's time; a dynamic method found
 * then is not named (its code may be another's by then). */
#ifndef PROFCPU_MEMORY_PERFMAP_H
#define PROFCPU_MEMORY_PERFMAP_H

#include "perf_data.h"
#include "target_process.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The most of each second that lookups may take: of the collector's CPU,
 * and of the wall time (a target slow to read holds the sampler up). */
#define MEMORY_PERFMAP_LOOKUP_SHARE 0.1
#define MEMORY_PERFMAP_WALL_SHARE   0.5

/* Where JIT frames of .NET processes get their names (collect's and the
 * agent's --names). */
enum jit_names {
	/* the perf map and jitdump turned on through the diagnostics IPC, the
	 * runtime's memory naming what they leave unnamed; the memory alone
	 * where the IPC does not answer */
	JIT_NAMES_AUTO,
	JIT_NAMES_PERFMAP, /* the perf map and jitdump alone */
	JIT_NAMES_MEMORY,  /* the runtime's memory alone: nothing asked, nothing written */
};

/* "auto", "perfmap", "memory"; false for another word. */
bool jit_names_parse(const char *text, enum jit_names *names);

struct memory_perfmap;

/* Finds the runtime of `target` (.NET 10 and later: its contract
 * descriptor) and what naming its code needs. NULL, with the reason in
 * `error` (one line), when it has none this route reads. `target` must
 * outlive the result. */
struct memory_perfmap *memory_perfmap_open(const struct target_process *target, char *error,
					   size_t error_size);

/* Where the target's own perf map and jitdump are followed too (collect's
 * auto route where the IPC answers): only the code they leave unnamed
 * (runtime stubs, code they did not list) is named, into
 * perf-<pid>.memory.map and perf-<pid>.memory.map.times, which the replay
 * reads after them. Called before memory_perfmap_start(). */
void memory_perfmap_for_misses(struct memory_perfmap *map);
bool memory_perfmap_is_for_misses(const struct memory_perfmap *map);

/* Says whether the runtime's own files name `address` by `time`: an
 * address they name is not looked up. */
typedef bool memory_perfmap_named_fn(void *context, uint64_t address, uint64_t time);

/* Starts writing into `dir` (appending to what an earlier capture into it
 * wrote); `named` (with `context`; NULL: none) is asked first where the
 * map is for misses. Returns 0, or -1 with errno set. */
int memory_perfmap_start(struct memory_perfmap *map, const char *dir,
			 memory_perfmap_named_fn *named, void *context);

/* Names the JIT code of `sample` (ignored unless it is the target's): the
 * user frames of its callchain, and `walked` (leaf first; NULL when none),
 * those the collector's walk found. */
void memory_perfmap_sample(struct memory_perfmap *map, const struct perf_sample *sample,
			   const uint64_t *walked, size_t walked_count);

/* Closes the files started, saying in `log` what was found and read. */
void memory_perfmap_stop(struct memory_perfmap *map, FILE *log);

void memory_perfmap_free(struct memory_perfmap *map);

#endif
