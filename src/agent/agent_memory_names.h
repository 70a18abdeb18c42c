/* The agent's names of JIT code from the runtime's memory: for each .NET
 * process whose runtime has a contract descriptor (.NET 10 and later) and
 * whose route (agent_processes.h) reads it, the worker's resolver asks here for each
 * address of generated code its process's files leave unnamed, once a
 * period (the replay keeps the answer), and the method found is read from
 * the runtime's memory (runtime_code_cache.h: kept, and read again after
 * ten seconds; a dynamic method's once each period).
 *
 * The lookups are made as the worker reads a finished period, up to a
 * period after the sample: a name is that of the code there then. Code
 * other than a dynamic method's stays until its assembly is unloaded; a
 * dynamic method's is freed and its space given to the next one, which
 * then names the samples of the one before.
 *
 * Cost: lookups take at most AGENT_MEMORY_NAMES_SHARE of each period's
 * time in the worker's CPU and AGENT_MEMORY_NAMES_WALL_SHARE in wall time
 * (lookup_budget.h), all processes together, each read bounded (target_memory.h): a
 * runtime with corrupt or planted structures costs that, and names
 * nothing it cannot check. What the budget leaves unlooked stays [JIT]. */
#ifndef PROFCPU_AGENT_MEMORY_NAMES_H
#define PROFCPU_AGENT_MEMORY_NAMES_H

#include "code_ranges.h"
#include "lookup_budget.h"
#include "memory_perfmap.h" /* enum jit_names */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The most of each period that lookups may take: of the worker's CPU,
 * and of the wall time. */
#define AGENT_MEMORY_NAMES_SHARE      0.1
#define AGENT_MEMORY_NAMES_WALL_SHARE 0.5

struct agent_processes;

struct agent_memory_names {
	struct agent_processes *processes; /* whose runtimes are read */
	struct lookup_budget budget;	   /* this period's */
	/* this period's, for the log */
	uint64_t lookups, named, put_off;
};

/* A period of `seconds` is read now: its budget starts. */
void agent_memory_names_start_period(struct agent_memory_names *names, double seconds);

/* The resolver's namer (resolver.h's jit_namer), `context` the names. */
bool agent_memory_names_name(void *context, pid_t pid, uint64_t address, uint64_t time,
			     struct code_range *found);

/* Says in `log` what the period's lookups did, when there were some. */
void agent_memory_names_report(const struct agent_memory_names *names, FILE *log);

#endif
