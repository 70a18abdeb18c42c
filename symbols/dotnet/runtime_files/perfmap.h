/* A JIT perf map, /tmp/perf-<pid>.map, as .NET, node --perf-basic-prof and
 * other runtimes write it: one line per generated code region,
 *
 *     <hex start> <hex size> <name, may contain spaces>
 *
 * The map only grows and may be flushed late, so it is read incrementally:
 * perfmap_read_more() takes what was appended since the last call and keeps
 * an unterminated last line for later. Addresses are reused (a re-jitted or
 * collected method): each line is valid from the time it appeared (as told
 * by perfmap_set_time) until a later line overlapping it (code_ranges.h).
 * Malformed lines are counted and skipped: the map belongs to the target
 * and is treated as hostile input. Reading is linear in the input however
 * it is split, a line longer than PERFMAP_MAX_LINE is counted and skipped,
 * and reading stops at PERFMAP_MAX_BYTES or PERFMAP_MAX_ENTRIES in all (and
 * PERFMAP_MAX_SECONDS per call), so memory and time stay bounded. */
#ifndef PROFCPU_PERFMAP_H
#define PROFCPU_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* .NET's longest names (generic instantiations) stay far below this. */
#define PERFMAP_MAX_LINE    (64 * 1024)
#define PERFMAP_MAX_BYTES   (256ULL << 20)
#define PERFMAP_MAX_SECONDS 10.0
/* Each entry costs 24 bytes beyond its text: a map of tiny lines stays
 * bounded too. Big .NET services have a few hundred thousand. */
#define PERFMAP_MAX_ENTRIES	 (4 * 1024 * 1024)
#define PERFMAP_MAX_ENTRIES_TEXT "4M"

struct target_file_budget;

struct perfmap_entry {
	uint64_t start;
	uint64_t size;
	const char *name;
	uint64_t valid_until; /* see code_range */
};

struct perfmap;

struct perfmap *perfmap_new(void);
void perfmap_free(struct perfmap *map);

/* Reads the bytes appended to the file `fd` (a target_file_open() fd)
 * since the last call, within the map's budget (perfmap_read_budget says
 * when it stopped reading). Returns 0, or -1 with errno set when reading
 * fails (entries read so far are kept). */
int perfmap_read_more(struct perfmap *map, int fd);

/* Adds the complete lines of `text` (what perfmap_read_more() does with the
 * bytes it reads). An unterminated tail is kept until more text arrives. */
void perfmap_add_text(struct perfmap *map, const char *text, size_t length);

/* Lines completed from now on appeared at `time` (CLOCK_MONOTONIC
 * nanoseconds); 0, the start, until it is called. */
void perfmap_set_time(struct perfmap *map, uint64_t time);

/* Finds the region that held `address` at `time` (code_ranges_lookup).
 * The name stays valid until the next perfmap_read_more() or
 * perfmap_add_text(). */
bool perfmap_lookup_at(struct perfmap *map, uint64_t address, uint64_t time,
		       struct perfmap_entry *found);

/* The region holding `address` in the latest lines. */
bool perfmap_lookup(struct perfmap *map, uint64_t address, struct perfmap_entry *found);

size_t perfmap_entry_count(const struct perfmap *map);
size_t perfmap_malformed_count(const struct perfmap *map);
/* Lines skipped for being longer than PERFMAP_MAX_LINE. */
size_t perfmap_long_line_count(const struct perfmap *map);
/* How much perfmap_read_more() read, and whether a limit stopped it. */
const struct target_file_budget *perfmap_read_budget(const struct perfmap *map);

#endif
