/* Generated code as a JIT runtime reports it over time (perf map lines,
 * jitdump records): named address ranges, each with the time it appeared.
 * Addresses are reused (a re-jitted method, a collected dynamic method
 * whose space a later one takes), so a range is valid from its time until
 * a later range overlapping it appears, or until an unload says it is gone.
 * Times are the sampling clock's (CLOCK_MONOTONIC nanoseconds); a source
 * without times uses 0 for all, and then the latest range wins, in the
 * order they were added. */
#ifndef PROFCPU_CODE_RANGES_H
#define PROFCPU_CODE_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ranges longer than this are refused: no method or stub block is, and one
 * range spanning the address space would make every lookup slow. */
#define CODE_RANGE_MAX_SIZE (256u << 20)

struct code_range {
	uint64_t start, size;
	uint64_t time;	      /* when it appeared */
	uint64_t valid_until; /* the first time after the lookup's at which the
				 answer for this address may change; UINT64_MAX
				 when it never does */
	const char *name;     /* NULL for code known to be gone */
};

struct code_ranges;

struct code_ranges *code_ranges_new(void);
void code_ranges_free(struct code_ranges *ranges);

/* Adds the range [start, start + size) named `name` (`length` bytes, not
 * NUL-terminated), valid from `time`. A range of the same start and time
 * replaces an earlier one. Returns false, adding nothing, for an empty,
 * wrapping or overlong range, a name holding a NUL, or when memory runs
 * out. */
bool code_ranges_add(struct code_ranges *ranges, uint64_t start, uint64_t size, uint64_t time,
		     const char *name, size_t length);

/* Records that the code in [start, start + size) is gone from `time` on
 * (unloaded, or moved away). */
bool code_ranges_remove(struct code_ranges *ranges, uint64_t start, uint64_t size, uint64_t time);

/* The range that held `address` at `time`: of the ranges containing it,
 * the latest that appeared at or before `time`, or else the earliest (code
 * runs before the line naming it is seen). False when no range ever
 * contained the address, or the one found says the code was gone; `found`
 * is filled in either way (name NULL on a miss). Names stay valid until
 * code_ranges_free(). */
bool code_ranges_lookup(struct code_ranges *ranges, uint64_t address, uint64_t time,
			struct code_range *found);

/* Ranges kept (replaced ones not counted). */
size_t code_ranges_count(struct code_ranges *ranges);

#endif
