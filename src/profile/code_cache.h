/* What the stack walk asks of each address it meets (resolver_code_at():
 * which code is there, and how to unwind it), remembered per (process,
 * address): stacks repeat, and looking each frame up again (the mapping,
 * then the module by its path) took a sixth of an off-CPU capture's
 * postprocess.
 *
 * Only answers about mapped files are kept (ELF files, ReadyToRun images):
 * they hold until the process's mappings change, which the replay says with
 * code_cache_forget() at every mapping, fork and exec. Generated code and
 * addresses outside every mapping are asked again each time: JIT code is
 * reused (the jitdump's answer depends on the time) and a perf map that
 * grows may name an address later. */
#ifndef PROFCPU_CODE_CACHE_H
#define PROFCPU_CODE_CACHE_H

#include "resolver.h"

struct code_cache;

struct code_cache *code_cache_new(struct resolver *resolver);
void code_cache_free(struct code_cache *cache);

/* resolver_code_at(), from the cache when it can. */
void code_cache_look_up(struct code_cache *cache, pid_t pid, uint64_t address,
			struct code_at *code);

/* Mappings changed: every answer is asked again. */
void code_cache_forget(struct code_cache *cache);

#endif
