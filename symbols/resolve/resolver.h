/* Turns sampled addresses into named frames: the process's mappings say
 * what is at an address; a JIT perf map names generated code, ELF symbols
 * name native code, kallsyms names the kernel.
 *
 * The caller replays the capture's side records in time order
 * (resolver_add_mapping, resolver_fork, resolver_exec), tells the time of
 * each sample (resolver_set_time), and asks for each unique address again
 * only once the answer's valid_until has passed: generated code comes and
 * goes, and a reused address names the code that was there at the time. */
#ifndef PROFCPU_RESOLVER_H
#define PROFCPU_RESOLVER_H

#include "jitdump.h"
#include "managed_lines.h"
#include "native_symbols.h"
#include "perfmap.h"
#include "stack_walk.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum frame_kind {
	FRAME_NATIVE, /* code in an ELF file */
	FRAME_JIT, /* generated code: .NET, node, anything with a perf map; precompiled .NET code */
	FRAME_KERNEL,
	FRAME_UNKNOWN, /* nothing says what is at the address */
};

#define RESOLVER_MAX_FRAMES 16 /* an address and the calls inlined into it */

struct resolved_frame {
	const char *function;	 /* never NULL: "[unknown]" or "[module]" when unnamed */
	uint64_t offset;	 /* from the function's start */
	bool named;		 /* a symbol or a perf map line names it */
	struct source_line line; /* where in the function; file NULL: unknown */
};

/* Strings stay valid until the next resolver call. */
struct resolved_location {
	const char *module;   /* file path as the process sees it, "/tmp/perf-N.map",
				 "[kernel.kallsyms]", "[JIT]" (generated code no
				 map names) or "[unknown]" */
	const char *build_id; /* the module's GNU build-id in hex, or NULL */
	enum frame_kind kind;
	size_t frame_count;				   /* at least 1 */
	struct resolved_frame frames[RESOLVER_MAX_FRAMES]; /* innermost first */
	uint64_t valid_until; /* the answer may change from this time on (JIT
				 code reused); UINT64_MAX when it cannot */
};

struct managed_images;

/* One process's jitdump as another reader parses it: collect's copier
 * (runtime_files.h) parses the target's jitdump as it copies it, for the
 * recording's walk and the replay alike. */
struct borrowed_jitdump {
	pid_t pid;		 /* whose jitdump it is; 0: none lent */
	struct jitdump *jitdump; /* freed by its owner after the resolver */
	/* Takes what the runtime wrote by `time` (the samples' clock); false
	 * when the jitdump cannot be read. NULL: the parse is whole. */
	bool (*read_more)(void *context, uint64_t time);
	void *context;
};

/* Asked for generated code of `pid` at `address` (a return address less
 * one) that neither the process's runtime files nor its runtime methods
 * name, sampled at `time`: true with the code's start, name and
 * valid_until in `found` (its name valid until the next resolver call). */
struct jit_namer {
	bool (*name)(void *context, pid_t pid, uint64_t address, uint64_t time,
		     struct code_range *found);
	void *context;
};

struct resolver_config {
	struct native_symbols_config native;
	/* Holds copies of perf-<pid>.map (with perf-<pid>.map.times, when each
	 * byte was seen) and jit-<pid>.dump; may be NULL. */
	const char *capture_dir;
	/* A running target whose /tmp/perf-<namespace pid>.map and jitdump may
	 * still grow, read inside its root when the capture folder has no
	 * copy; live_pid 0 when there is none. */
	pid_t live_pid, live_namespace_pid;
	/* Every process of the capture may still run (collect -a, --cgroup):
	 * each one's files and /tmp are read inside its own root. */
	bool live_every_process;
	/* The target's .NET images (managed_images.h), when another resolver
	 * reads them too: collect's recording walks the stacks its replay walks
	 * again, and each image is read once for both. Borrowed: freed by the
	 * caller after the resolver. NULL: the resolver reads its own. */
	struct managed_images *managed_images;
	/* The ELF files' symbols and CFI, when another resolver reads them too
	 * (resolver_native_symbols_new): borrowed like managed_images. NULL:
	 * the resolver reads its own, as `native` says. */
	struct native_symbols *native_symbols;
	/* The jitdump of one process, parsed by its copier: the resolver
	 * reads no other copy of it. */
	struct borrowed_jitdump jitdump;
	/* Names generated code that nothing above names (the agent's lookups
	 * in the runtime's memory); NULL: none. */
	struct jit_namer jit_namer;
};

struct resolver;

struct resolver *resolver_new(const struct resolver_config *config);
/* What a resolver with `config` would read ELF files with, for several
 * resolvers to share (config.native_symbols); free with
 * native_symbols_free() after them. */
struct native_symbols *resolver_native_symbols_new(const struct resolver_config *config);
void resolver_free(struct resolver *resolver);

/* A mapping of `file` (its path and identity, mapped_file.h) in `pid`. */
void resolver_add_mapping(struct resolver *resolver, pid_t pid, uint64_t start, uint64_t length,
			  uint64_t page_offset, const struct mapped_file *file);
/* A new process `child` made by fork(): it starts with the parent's mappings
 * (and its own perf map and jitdump, not what an earlier process of the
 * pid left). */
void resolver_fork(struct resolver *resolver, pid_t child, pid_t parent);
/* `pid` called exec(): its old mappings, perf map and jitdump are gone. */
void resolver_exec(struct resolver *resolver, pid_t pid);

/* A long-lived resolver over captures of the same live processes, one
 * after the other (profcpu agent's periods, each of which describes every
 * process's mappings anew): resolver_next_capture() before each capture
 * after the first drops every process's mappings, reads what the runtime
 * files kept open gained, forgets processes that found none (they are
 * looked for again), and frees the ELF files no recent capture asked
 * about. resolver_forget_process() drops all of a process that exited, so
 * its pid may be reused. */
void resolver_next_capture(struct resolver *resolver);
void resolver_forget_process(struct resolver *resolver, pid_t pid);

/* The time (the samples' clock) of the addresses asked for next. */
void resolver_set_time(struct resolver *resolver, uint64_t time);

/* Names the code at `address` in `pid`. `return_address` marks a caller's
 * frame, whose address follows the call instruction. */
void resolver_resolve(struct resolver *resolver, pid_t pid, uint64_t address, bool kernel,
		      bool return_address, struct resolved_location *location);

/* What the unwinder needs to know of the code at `address` in `pid`
 * (stack_walk.h): generated code, or a mapped file and its call frame
 * information, cached per file. */
void resolver_code_at(struct resolver *resolver, pid_t pid, uint64_t address, struct code_at *code);

/* Reads what the jitdump of `pid` gained since it was last read: a walk
 * made while the target runs meets code its runtime has just described.
 * False when `pid` has no jitdump (none yet, or unreadable). */
bool resolver_read_more_jitdump(struct resolver *resolver, pid_t pid);

/* Names the JIT code of `pid` that neither its jitdump nor its perf map
 * names from `methods`: the runtime's own method events, timed on the
 * samples' clock (code_ranges.h). The resolver takes `methods` over and
 * frees it. */
void resolver_add_runtime_methods(struct resolver *resolver, pid_t pid,
				  struct code_ranges *methods);

/* Gives the JIT code of `pid` its source lines from `lines` (the runtime's
 * maps of its code to IL offsets, managed_lines.h), read with the PDBs
 * inside the native configuration's target root. The resolver takes
 * `lines` over and frees it. */
void resolver_add_managed_lines(struct resolver *resolver, pid_t pid, struct managed_lines *lines);

/* The perf map of `pid` (loaded if not yet), or NULL when it has none. */
struct perfmap *resolver_perfmap(struct resolver *resolver, pid_t pid);

/* The replay has named every frame: the copy of the kernel symbols that
 * collect writes into the capture folder is complete (native_symbols.h). */
void resolver_finish_kernel_symbols_copy(struct resolver *resolver);

#endif
