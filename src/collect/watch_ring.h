/* The flight recorder's ring (profcpu watch): what was sampled, in files of
 * one period (a second) each, every one whole as an agent period's is (it
 * starts with the synthesized threads and mappings of its moment), the
 * oldest deleted once no capture can need them. A capture of [from, to]
 * joins the files that overlap it into one perf.data. */
#ifndef PROFCPU_WATCH_RING_H
#define PROFCPU_WATCH_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct watch_chunk {
	char *dir;	     /* holds perf.data */
	bool owns_dir;	     /* the folder is the chunk's alone: deleted with it */
	uint64_t start, end; /* CLOCK_MONOTONIC nanoseconds, the samples' clock */
};

struct watch_ring {
	struct watch_chunk *chunks; /* oldest first */
	size_t count, capacity;
};

/* Adds the finished period in `dir` (DIR/perf.data), sampled from `start`
 * to `end`. */
void watch_ring_add(struct watch_ring *ring, const char *dir, bool owns_dir, uint64_t start,
		    uint64_t end);

/* Deletes the periods that ended before `keep_from`. */
void watch_ring_drop_before(struct watch_ring *ring, uint64_t keep_from);

/* Writes `path`, a perf.data of the samples timed in [from, to], with the
 * side records that name them: every record but samples of the first period
 * that overlaps the window, and the later ones' but their synthesized
 * records (time 0: what they describe is known already, and a later state
 * must not rename earlier samples). Returns the samples written, or -1
 * after one line saying why nothing could be written. */
long watch_ring_write(const struct watch_ring *ring, uint64_t from, uint64_t to, const char *path,
		      const char *command_line);

/* Deletes every period. */
void watch_ring_release(struct watch_ring *ring);

#endif
