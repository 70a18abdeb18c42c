/* The second half of every profile: symbolize a capture folder's perf.data
 * and write all its outputs into the folder. */
#ifndef PROFCPU_POSTPROCESS_H
#define PROFCPU_POSTPROCESS_H

#include "outputs.h"
#include "resolver.h"
#include "runtime_trace.h"

/* The runtime's files (perf map, jitdump) are read from the copies that
 * collect made in `dir` while sampling, else from a live target in
 * `config`, else from this machine's /tmp. `zip` says where the
 * perfcollect zip goes (NULL: DIR/prof.trace.zip), `fold` how folded stacks
 * name and group frames (NULL: the defaults). `trace` is the capture's
 * runtime.nettrace when the caller read it already (its methods go to the
 * resolver); NULL: it is read here. Returns 0, or -1 after printing what
 * went wrong. */
int postprocess_capture(const char *dir, const struct resolver_config *config,
			const struct trace_zip *zip, const struct fold_options *fold,
			struct runtime_trace *trace);

/* Only the replay of DIR/perf.data into `profile` (which it initializes;
 * the caller releases it), for commands that show a profile rather than
 * write the outputs (profcpu lines). Returns 0, or -1 after printing what
 * went wrong. */
int postprocess_read_profile(const char *dir, const struct resolver_config *config,
			     struct profile *profile);

#endif
