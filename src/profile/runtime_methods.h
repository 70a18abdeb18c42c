/* The JIT code a .NET runtime's own method events name (read from its
 * nettrace): the rundown's MethodDCEndVerbose events, one per piece of code
 * alive when the session ended (each tier of a method at its own address),
 * and, when the session recorded Verbose JIT events, MethodLoadVerbose and
 * MethodUnloadVerbose while it ran. They name JIT frames of a process that
 * has no perf map and cannot be given one (a runtime older than .NET 8, a
 * capture made with --no-perfmap-switch).
 *
 * Names take the form of the runtime's perf map,
 * "RETURN [Assembly] Namespace.Type::Method(PARAMETERS)[Tier]", so every
 * output shows them as it shows the perf map's (managed_name.h). */
#ifndef PROFCPU_RUNTIME_METHODS_H
#define PROFCPU_RUNTIME_METHODS_H

#include "code_ranges.h"
#include "nettrace.h"

#include <stdbool.h>
#include <stdint.h>

struct runtime_method {
	uint64_t module_id, start, size;
	uint32_t flags;
	char namespace_name[512], method_name[256], signature[512];
};

/* Reads the payload of a method load, unload or rundown event (Verbose:
 * MethodLoadVerbose, MethodUnloadVerbose, MethodDCEndVerbose). False when
 * the payload is too short for it. */
bool runtime_method_parse(const struct nettrace_event *event, struct runtime_method *method);

/* Reading the method events one at a time, as nettrace_parse() passes
 * them, beside other readers of the same pass. Start with the `info`
 * nettrace_parse() fills in; the events' payloads must stay where they are
 * until the reading is finished (they are read then). */
struct runtime_methods_reading;

struct runtime_methods_reading *runtime_methods_reading_start(const struct nettrace_info *info);

void runtime_methods_reading_take(struct runtime_methods_reading *reading,
				  const struct nettrace_event *event);

/* Ends the reading (freeing it) with the code ranges its method events
 * name, timed on the samples' clock (CLOCK_MONOTONIC nanoseconds): a loaded
 * method from its load, a rundown's from the rundown (code_ranges_lookup()
 * takes the earliest range for a sample before it: the rundown describes
 * code that was there all along, unless a load or unload of the same
 * address says otherwise). *process_id is the pid the runtime knows itself
 * by (in its own pid namespace). NULL, with a reason in `why`, when the
 * events name no code. */
struct code_ranges *runtime_methods_reading_finish(struct runtime_methods_reading *reading,
						   uint32_t *process_id, char *why,
						   size_t why_size);

#endif
