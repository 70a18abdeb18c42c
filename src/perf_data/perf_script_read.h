/* Reads the text of `perf script` (perfcollect's perf.data.txt) by the rules
 * PerfView's importer (TraceEvent's LinuxPerfScriptEventParser) applies, so
 * profcpu view shows what PerfView would show:
 *
 *   header  COMM PID/TID [CPU] TIME: [PERIOD] EVENT: [DETAILS]
 *           the comm ends before the first " PID/TID" (or " PID [CPU]");
 *   frames  one per line, each starting with a TAB: ADDR SYMBOL (DSO), leaf
 *           first; the symbol is everything before the last '(', "+0x..."
 *           stripped; the module is the DSO's file name, or for a JIT perf
 *           map (DSO ending in ".map") the [Assembly] token in the symbol;
 *   a blank line ends a sample. */
#ifndef PROFCPU_PERF_SCRIPT_READ_H
#define PROFCPU_PERF_SCRIPT_READ_H

#include <stddef.h>
#include <stdio.h>

struct perf_script_frame {
	const char *module, *symbol;
};

/* Strings are valid during the callback only. */
struct perf_script_sample {
	const char *comm, *event;
	int pid, tid, cpu; /* cpu -1 when the header has none */
	double seconds;
	struct perf_script_frame *frames; /* leaf first */
	size_t frame_count;
};

typedef void (*perf_script_sample_handler)(const struct perf_script_sample *sample, void *context);

/* Calls `handler` for every sample in `in`. Returns the number of samples,
 * or -1 after writing why into `error` (e.g. "line 12: not a sample
 * header"). */
long perf_script_read(FILE *in, perf_script_sample_handler handler, void *context, char *error,
		      size_t error_size);

#endif
