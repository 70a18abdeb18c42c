/* A capture's runtime.nettrace read once, in one pass: the summary of the
 * runtime's events (runtime_events.h), the events that carry stacks
 * (runtime_stacks.h), the JIT code its method events name
 * (runtime_methods.h) and the maps of that code to IL offsets
 * (runtime_line_maps.h). collect prints the summary, the flame graph's
 * subtitle takes its GC pauses, the resolver the methods and maps, and
 * the stacks become profiles of their own (runtime_profiles.h). */
#ifndef PROFCPU_RUNTIME_TRACE_H
#define PROFCPU_RUNTIME_TRACE_H

#include "code_ranges.h"
#include "managed_lines.h"
#include "runtime_events.h"
#include "runtime_stacks.h"

struct runtime_trace {
	int status;		      /* 0, or -1: the file is missing, not nettrace, or damaged */
	char why[160];		      /* why status is -1 */
	struct runtime_events events; /* what came before any damage */
	struct runtime_stacks stacks;
	struct code_ranges *methods; /* NULL when the trace names no code */
	struct managed_lines *lines; /* NULL when the trace maps no code to IL */
	uint32_t process_id;	     /* the pid the runtime knows itself by */
};

/* Reads the nettrace file at `path` (a regular file of at most 4 GiB, not
 * followed through a symlink) into `trace`. Returns trace->status. Release
 * `trace` in every case. */
int runtime_trace_read(const char *path, struct runtime_trace *trace);

/* The same from the `size` bytes of a nettrace at `data` (a zip's entry, a
 * fuzzer's input), which must stay there until `trace` is released. A
 * stream cut short yields what it holds and sets trace->events.info.truncated. */
int runtime_trace_parse(const uint8_t *data, size_t size, struct runtime_trace *trace);

/* The trace's methods, now the caller's to free (NULL when none); the
 * trace no longer holds them. */
struct code_ranges *runtime_trace_take_methods(struct runtime_trace *trace);

/* The trace's maps of JIT code to IL offsets, now the caller's to free
 * (NULL when none). */
struct managed_lines *runtime_trace_take_lines(struct runtime_trace *trace);

void runtime_trace_release(struct runtime_trace *trace);

#endif
