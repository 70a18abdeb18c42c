/* What the stack walk asks of each address it meets (resolver_code_at():
 * which code is there, and how to unwind it), remembered per (process,
 * address): stacks repeat, and looking each frame up again (the mapping,
 * then the module by its path) took a sixth of an off-CPU capture's
 * postprocess.
 *
 * The resolver keeps only answers about mapped files (ELF files, ReadyToRun
 * images): they hold until the process's mappings change. Answers are kept
 * per generation, a number the process takes anew at every mapping, fork
 * and exec (code_cache_new_generation()), so that a change forgets that
 * process's answers alone: a capture of the whole machine sees more
 * mappings than samples (builds start processes all the time). Generated code
 * and addresses outside every mapping are asked again each time: JIT code
 * is reused (the jitdump's answer depends on the time) and a perf map that
 * grows may name an address later. */
#ifndef PROFCPU_CODE_CACHE_H
#define PROFCPU_CODE_CACHE_H

#include "stack_walk.h"

#include <stdbool.h>
#include <stdint.h>

struct code_cache;

/* NULL when memory runs out. */
struct code_cache *code_cache_new(void);
void code_cache_free(struct code_cache *cache);

/* A generation no earlier call returned (from 1): a process's answers
 * kept under its earlier generations are not found again. */
uint64_t code_cache_new_generation(struct code_cache *cache);

/* The answer kept for `address` in `generation`, if any. */
bool code_cache_find(const struct code_cache *cache, uint64_t generation, uint64_t address,
		     struct code_at *code);

/* Keeps `code` as the answer for `address` in `generation`, in place of an
 * older answer for another address. */
void code_cache_keep(struct code_cache *cache, uint64_t generation, uint64_t address,
		     const struct code_at *code);

#endif
