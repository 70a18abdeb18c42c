/* A JIT perf map, /tmp/perf-<pid>.map, as .NET, node --perf-basic-prof and
 * other runtimes write it: one line per generated code region,
 *
 *     <hex start> <hex size> <name, may contain spaces>
 *
 * The map only grows and may be flushed late, so it is read incrementally:
 * perfmap_read_more() takes what was appended since the last call and keeps
 * an unterminated last line for later. For one start address the latest line
 * wins (a re-jitted method). Malformed lines are counted and skipped: the map
 * belongs to the target and is treated as hostile input. Reading is linear
 * in the input however it is split, a line longer than PERFMAP_MAX_LINE is
 * counted and skipped, and reading stops at PERFMAP_MAX_BYTES or
 * PERFMAP_MAX_ENTRIES in all (and PERFMAP_MAX_SECONDS per call), so memory
 * and time stay bounded. */
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

/* Finds the region containing `address`. The name stays valid until the next
 * perfmap_read_more() or perfmap_add_text(). */
bool perfmap_lookup(struct perfmap *map, uint64_t address, struct perfmap_entry *found);

size_t perfmap_entry_count(const struct perfmap *map);
size_t perfmap_malformed_count(const struct perfmap *map);
/* Lines skipped for being longer than PERFMAP_MAX_LINE. */
size_t perfmap_long_line_count(const struct perfmap *map);
/* How much perfmap_read_more() read, and whether a limit stopped it. */
const struct target_file_budget *perfmap_read_budget(const struct perfmap *map);
/* Bytes of the well-formed lines kept: about the size of a full copy. */
size_t perfmap_text_size(const struct perfmap *map);

/* Writes the well-formed lines read so far to `out`: the copy kept beside a
 * capture, so that it can be symbolized after the target is gone. Returns 0,
 * or -1 when writing failed. */
int perfmap_write_copy(const struct perfmap *map, FILE *out);

/* Writes, once each, the entries holding any of `addresses` (sorted in
 * place): the copy of a map too big to keep whole, with the lines sampled
 * code needs. Returns how many entries were written. */
size_t perfmap_write_entries_holding(struct perfmap *map, uint64_t *addresses, size_t count,
				     FILE *out);

#endif
