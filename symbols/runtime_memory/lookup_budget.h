/* What looking up code in runtimes' memory may cost its caller, in a
 * window of time (collect: each second; the agent: each period): a share
 * of the caller's own CPU, and a larger share of the window's wall time.
 *
 * CPU is what a lookup costs the machine: on a loaded machine the caller
 * waits for a CPU, and a budget of wall time alone ran out while no lookup
 * ran (WebMix at 999 Hz beside other work: 6.9 to 10% of samples left
 * [JIT]). Wall time bounds a target whose memory is slow to read (pages
 * it has to fault in), which costs no CPU but holds the caller up. */
#ifndef PROFCPU_LOOKUP_BUDGET_H
#define PROFCPU_LOOKUP_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct lookup_budget {
	double cpu_share, wall_share;
	uint64_t window_ns, window_start_ns; /* CLOCK_MONOTONIC */
	uint64_t cpu_spent_ns, wall_spent_ns;
};

/* A lookup being made: when it began, on both clocks. */
struct lookup_clock {
	uint64_t cpu_ns, wall_ns;
};

/* Windows of `window_seconds`, one after the other from now, in each of
 * which lookups take at most `cpu_share` of it in the calling thread's CPU
 * and `wall_share` of it in wall time. */
void lookup_budget_init(struct lookup_budget *budget, double window_seconds, double cpu_share,
			double wall_share);

/* Starts a window of `seconds` now (the agent's period, read at once). */
void lookup_budget_start(struct lookup_budget *budget, double seconds);

/* Whether this window has time left; a window past its end starts anew. */
bool lookup_budget_left(struct lookup_budget *budget);

/* The wall time this window has left, in seconds: what one lookup's reads
 * may take at most (target_memory.h). */
double lookup_budget_wall_left(const struct lookup_budget *budget);

struct lookup_clock lookup_budget_begin(void);

/* A lookup begun at `began` is done: its CPU and wall time are spent. */
void lookup_budget_spend(struct lookup_budget *budget, struct lookup_clock began);

/* The CPU spent in this window, in ns (for the log). */
uint64_t lookup_budget_cpu_spent(const struct lookup_budget *budget);

#endif
