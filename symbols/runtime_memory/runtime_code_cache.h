/* One .NET process's JIT code as found in its runtime's memory
 * (runtime_names.h), kept so that a method is read once in a while, not at
 * each of its samples: what collect names as it samples
 * (src/collect/memory_perfmap.h) and what the agent names each period
 * (src/agent/agent_memory_names.h) share it.
 *
 * Found code is kept from its start to the furthest address asked in it
 * so far, with its name, and taken as known for RUNTIME_CODE_RECHECK_NS
 * after it was read: code other than a dynamic method's is freed only
 * when its assembly is unloaded; a dynamic method's is freed and its
 * space given to the next one, which the caller weighs (dynamic_too). An
 * address of no method is taken as such as long. Up to 2^18 methods are
 * kept (past that, what is read is not kept) and 12,288 addresses of no
 * method (past that, they are forgotten at once). */
#ifndef PROFCPU_RUNTIME_CODE_CACHE_H
#define PROFCPU_RUNTIME_CODE_CACHE_H

#include "lookup_budget.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long what was read is taken as known (CLOCK_MONOTONIC ns). */
#define RUNTIME_CODE_RECHECK_NS (10 * 1000000000ull)

struct runtime_code_cache;

/* Code of a method or stub, as far as it is known. */
struct runtime_code {
	uint64_t start, end; /* [start, end): from its start to past what was asked */
	/* as the runtime's perf map writes it ("[hotloop]
	 * Demo.Program::HotMethod()", "stub FixupPrecode for ..."); valid until
	 * the next call on the cache */
	const char *name;
	bool dynamic; /* a dynamic method's, whose code is freed and reused */
};

/* Finds the runtime of `pid` (.NET 10 and later: its contract descriptor)
 * and what naming its code needs, its modules' files opened inside
 * `root_fd` (duplicated: the caller keeps its own). NULL, with the reason
 * in `error` (one line), when it has none this route reads. */
struct runtime_code_cache *runtime_code_cache_open(pid_t pid, int root_fd, char *error,
						   size_t error_size);
void runtime_code_cache_free(struct runtime_code_cache *cache);

/* The runtime's library, as the process maps it. */
const char *runtime_code_cache_runtime_path(const struct runtime_code_cache *cache);

/* Reads of the target's memory so far, the descriptor's included. */
uint64_t runtime_code_cache_reads(const struct runtime_code_cache *cache);

/* The known code that holds `address`, read within RUNTIME_CODE_RECHECK_NS
 * before `now`; a dynamic method's only when `dynamic_too`. */
bool runtime_code_cache_known(struct runtime_code_cache *cache, uint64_t address, uint64_t now,
			      bool dynamic_too, struct runtime_code *code);

/* Whether `address` holds no method or stub: it lies in a file the
 * process maps as code (ELF, ReadyToRun images; its mappings read again
 * each RUNTIME_CODE_RECHECK_NS), or it was read within that time and held
 * none. Native frames cost no lookup: on a slow machine (arm64 emulated)
 * their lookups took the whole time budget before the JIT frames'. */
bool runtime_code_cache_no_code(struct runtime_code_cache *cache, uint64_t address, uint64_t now);

enum runtime_code_read {
	RUNTIME_CODE_FOUND,
	RUNTIME_CODE_NONE,    /* no method or stub there: kept as such */
	RUNTIME_CODE_STOPPED, /* the budget's time, or the bytes, ran out first */
	RUNTIME_CODE_PUT_OFF, /* the budget had no time left: nothing read */
};

/* Reads what holds `address` from the runtime's memory, within what
 * `budget` has left of its window (lookup_budget.h; the read's cost spent
 * from it) and 1 MiB: into `code`, its end just past `address`. Found code
 * is not kept (runtime_code_cache_keep). */
enum runtime_code_read runtime_code_cache_read(struct runtime_code_cache *cache, uint64_t address,
					       uint64_t now, struct lookup_budget *budget,
					       struct runtime_code *code);

/* Keeps `code` as read at `now`, in place of the known code it overlaps
 * (freed, and this in its place); known code of its start and name
 * reaches as far as either. True when it was not known that far under
 * that name (collect writes a perf map line then); `code->end` is then
 * the furthest known. */
bool runtime_code_cache_keep(struct runtime_code_cache *cache, struct runtime_code *code,
			     uint64_t now);

/* Forgets the code kept (not the addresses of no method). */
void runtime_code_cache_forget_code(struct runtime_code_cache *cache);

#endif
