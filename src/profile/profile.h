/* The symbolized profile: what every output (folded stacks, perf script
 * text, flame graph, archives) reads. Built once per capture.
 *
 *   location: a unique (process, address), with the frames that name it
 *             (an address may hold inlined calls: several frames);
 *   stack:    a unique sequence of locations, leaf first, as sampled;
 *   sample:   one sample of one thread, pointing at its stack. */
#ifndef PROFCPU_PROFILE_H
#define PROFCPU_PROFILE_H

#include "id_map.h"
#include "resolver.h"
#include "string_table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile_frame {
	const char *function; /* interned */
	uint64_t offset;
	bool named;
	/* The source line the frame was at (SOURCE_LINES.md): DWARF's for
	 * native code, the method's PDB for .NET's; file NULL, line 0 when
	 * unknown. */
	const char *file; /* interned */
	uint32_t line;
};

/* A pid names several processes in one capture when it is reused, or when
 * its process execs another program: `generation` tells them apart (0 for
 * the process the capture first saw, then one more at each fork or exec
 * that starts a process under that pid). */
struct profile_location {
	uint32_t pid, generation;
	uint64_t address;
	bool kernel;
	enum frame_kind kind;
	const char *module;		   /* interned */
	const char *build_id;		   /* interned hex, or NULL */
	uint32_t first_frame, frame_count; /* into profile.frames, innermost first */
};

struct profile_stack {
	uint32_t first, depth; /* into profile.stack_locations, leaf first */
};

struct profile_sample {
	uint64_t time, period;
	uint32_t pid, generation, tid, cpu;
	uint32_t stack;
	const char *process_name, *thread_name; /* interned */
};

/* A thread leaving its CPU (recorded with --off-cpu), with its stack at
 * that moment and the tracepoint's fields. The software event knows less
 * (off_cpu.h): what it does not know is -1, and next_comm "?". */
struct profile_switch {
	struct profile_sample sample; /* the thread leaving; period unused */
	const char *next_comm;	      /* interned */
	int32_t prev_prio, next_pid, next_prio;
	int64_t prev_state;
	bool awaiting_record; /* the software event's: the kernel's switch record is to come */
};

/* A thread coming back onto a CPU. */
struct profile_switch_in {
	uint64_t time;
	uint32_t tid;
};

/* The kernel's record of a thread of the target coming back onto a CPU,
 * per thread: nothing else names the thread taking the CPU when the one
 * leaving was another process's, or when the software event recorded the
 * leave. Printed as a switch line of its own, for PerfView's Thread Time,
 * which ends a thread's blocked time only at a switch naming it. */
struct profile_return {
	struct profile_sample sample; /* the thread coming back; an empty stack */
};

struct profile {
	struct string_table *strings;
	const char *event_name;
	uint64_t lost_samples;
	uint64_t cut_stacks;	  /* samples whose stack reached the kernel's limit */
	unsigned max_stack_depth; /* that limit */
	uint64_t rooted_stacks;	  /* samples whose stack reaches a thread's start */
	/* Samples whose walk stopped at a frame whose CFI rules it could not
	 * follow (stack_walk_end.unfollowed), and how many by that frame's
	 * module: unfollowed_modules gives an interned module's id (first
	 * word) into unfollowed_by_module. */
	uint64_t unfollowed_stacks;
	struct id_map unfollowed_modules;
	uint64_t *unfollowed_by_module;
	bool compressed_capture; /* perf.data's records are zstd-compressed */
	/* Unix time minus the samples' time, when perf.data says (its
	 * HEADER_CLOCK_DATA): what dates a sample. */
	bool has_wall_clock;
	int64_t wall_clock_offset;
	/* The (pid, generation) that a fork began: another process under the
	 * pid, where the other generations began with an exec. */
	struct id_map forks;
	/* Set before the replay to leave out pid 0: the idle task, and in a
	 * PID namespace every task outside it (the kernel names them 0), whose
	 * user stacks would be named from all their mappings at once. */
	bool without_pid_0;
	/* Set before the replay to replay only the processes it takes (NULL:
	 * all): the others' samples are neither walked nor named, their
	 * mappings not read (the agent's selection). */
	bool (*takes_process)(uint32_t pid, void *context);
	void *takes_context;

	struct profile_frame *frames;
	size_t frame_count, frame_capacity;
	struct profile_location *locations;
	size_t location_count, location_capacity;
	uint32_t *stack_locations;
	size_t stack_location_count, stack_location_capacity;
	struct profile_stack *stacks;
	size_t stack_count, stack_capacity;
	struct profile_sample *samples;
	size_t sample_count, sample_capacity;

	/* Off-CPU time (off_cpu.h): switches in time order, the returns seen,
	 * and the intervals paired from them, as samples whose period is the
	 * nanoseconds off CPU and whose stack is the one the thread left with. */
	struct profile_switch *switches;
	size_t switch_count, switch_capacity;
	struct profile_switch_in *switch_ins;
	size_t switch_in_count, switch_in_capacity;
	struct profile_return *returns; /* in time order */
	size_t return_count, return_capacity;
	struct profile_sample *off_cpu;
	size_t off_cpu_count, off_cpu_capacity;

	/* Hash indexes for interning; private to profile.c. */
	uint32_t *location_index, *stack_index;
	size_t location_index_size, stack_index_size;
};

#define PROFILE_NOT_FOUND UINT32_MAX

void profile_init(struct profile *profile);
void profile_release(struct profile *profile);

/* The table's copy of `text` with control characters as '?': names come
 * from the profiled process (file names, symbols, perf map lines, thread
 * names), and a newline or an escape sequence in one would break the text
 * outputs or drive the user's terminal. */
const char *profile_intern_printable(struct profile *profile, const char *text);

/* The location already made for (pid, address, kernel), or PROFILE_NOT_FOUND. */
uint32_t profile_find_location(const struct profile *profile, uint32_t pid, uint64_t address,
			       bool kernel);
uint32_t profile_add_location(struct profile *profile, uint32_t pid, uint64_t address, bool kernel,
			      const struct resolved_location *resolved);

/* The id of the stack made of `locations` (leaf first), added if new. */
uint32_t profile_intern_stack(struct profile *profile, const uint32_t *locations, size_t depth);

void profile_add_sample(struct profile *profile, const struct profile_sample *sample);

/* What starts each folded stack: the samples' group. */
enum fold_group {
	/* The thread's name, numbers at its end left out ("worker-3" groups
	 * with "worker-4" as "worker"): what stackcollapse-perf starts stacks
	 * with, and .NET names its threads by role (".NET TP Worker"). */
	FOLD_BY_THREAD,
	FOLD_BY_TID,	 /* "NAME-PID/TID", as stackcollapse-perf --tid writes it */
	FOLD_BY_PROCESS, /* the process name */
	FOLD_BY_PID,	 /* "NAME-PID": one tower per process, as a capture of
			    every process shows best (many are called dotnet) */
};

struct fold_options {
	enum fold_group group_by;
	/* Keep a JIT method's tier in its readable name, so code re-jitted
	 * during the capture (tier-up, OSR) stays apart: "... [OptimizedTier1]". */
	bool keep_tiers;
	/* Weigh each sample by its period (off-CPU nanoseconds), not 1. */
	bool weigh_by_period;
	/* A frame per function and source line, "NAME FILE:LINE", where the
	 * line is known (SOURCE_LINES.md). */
	bool by_line;
};

/* Function-level stacks, root first, as folded outputs and flame graphs
 * show them. Frames are named for reading: .NET methods by
 * managed_name_readable(), and a run of unnamed frames of one module
 * ("[libcoreclr.so]" called from itself) as one frame. */
struct folded_stack {
	const char **functions;	 /* root first: the group, then readable names */
	const char **full_names; /* the same frames as the profile names them,
				    with " at FILE:LINE" where the line is known */
	enum frame_kind *kinds;
	size_t depth;
	uint64_t count;
};

/* One stack per unique sequence of (function, full name): stacks with the
 * same functions (a method sampled at two tiers) are neighbours. */
struct folded_profile {
	struct folded_stack *stacks; /* sorted by their functions, then full names */
	size_t count;
	uint64_t total;
	struct string_table *names; /* owns the readable names and groups */
};

/* `options` may be NULL: grouped by thread, tiers merged. */
void profile_fold(const struct profile *profile, const struct fold_options *options,
		  struct folded_profile *folded);
void folded_profile_release(struct folded_profile *folded);

#endif
