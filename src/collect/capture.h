/* The capture stage: records a target into DIR/perf.data, with a progress
 * line, a summary on stderr and in the capture's log. */
#ifndef PROFCPU_CAPTURE_H
#define PROFCPU_CAPTURE_H

#include "perf_call_graph.h"
#include "target_process.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct jitdump;
struct managed_images;
struct memory_perfmap;
struct memory_perfmaps;
struct native_symbols;

struct capture_options {
	double duration; /* seconds; 0 until Ctrl-C, SIGTERM or the target's exit */
	unsigned frequency, buffer_pages;
	enum call_graph_mode call_graph;
	unsigned stack_size;	  /* bytes of user stack per sample: dwarf and hybrid */
	bool compress;		  /* zstd records, as perf record -z */
	bool hardware_events;	  /* CPU cycles where the CPU has a PMU */
	bool off_cpu;		  /* also the switches, for off-CPU time (switch_events.h) */
	const char *command_line; /* for the capture's header */
	bool *stopped_early;	  /* if not NULL: set when Ctrl-C, SIGTERM, the target's exit
				   * or a write error ended the capture before its duration */
	/* The target's .NET images, read by the walk that trims stack copies
	 * and again by the replay: borrowed (resolver.h); may be NULL. */
	struct managed_images *managed_images;
	/* Their ELF files' symbols and CFI, the same way (never downloading:
	 * resolver_config.native_symbols); may be NULL. */
	struct native_symbols *native_symbols;
	/* Parses the target's jitdump as it is copied, for that walk and then
	 * the replay (jitdump_new(), empty; borrowed); NULL: the target's perf
	 * map and jitdump are not followed (collect -a: one capture of every
	 * process, whose files the replay reads from each one's root). */
	struct jitdump *jitdump;
	/* Names the target's JIT code from its runtime's memory as it is
	 * sampled, into the capture's perf map (memory_perfmap.h; borrowed);
	 * NULL: not. Where set, the target's own perf map and jitdump are not
	 * followed, unless it names only what they leave unnamed
	 * (memory_perfmap_for_misses()). */
	struct memory_perfmap *memory_perfmap;
	/* The same for every .NET process of a capture of every process,
	 * each for what its perf map leaves unnamed (memory_perfmaps.h;
	 * borrowed); NULL: not. */
	struct memory_perfmaps *memory_perfmaps;
	/* Continuous capture (profcpu agent): every `period` seconds (0:
	 * never) the folder's perf.data is finished and `next_period` gets
	 * that folder; it returns the folder of the next period's perf.data
	 * (malloc'd, made), or NULL to stop. Sampling goes on meanwhile. The
	 * last folder, finished at the end, is the caller's to take. When it
	 * returns NULL with *period_ended set, the capture ends there as the
	 * caller chose (profcpu watch --once), not as a write error. */
	double period;
	char *(*next_period)(const char *finished_dir, void *context);
	void *period_context;
	const bool *period_ended; /* may be NULL */
	/* Told the process of each sample as it is written (with
	 * period_context); may be NULL. */
	void (*sampled)(uint32_t pid, void *context);
};

/* Returns 0 when a capture was written (possibly cut short: a full disk,
 * the target's exit), or -1 after printing why nothing could be recorded. */
int capture_target(const struct capture_options *options, const struct target_process *target,
		   const char *dir, FILE *log);

#endif
