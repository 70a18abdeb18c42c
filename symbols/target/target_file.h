/* Reading a file that belongs to the profiled process, which is hostile
 * input: the target (or any user who can write its /tmp) chooses what the
 * path holds. A FIFO would block the profiler forever, a device such as
 * /dev/zero never ends, a regular file may be huge or keep growing. So every
 * file of the target is read through these two calls:
 *
 *   target_file_open()  opens the path inside the target's root (see
 *                       target_root.h) as an O_PATH handle, checks with fstat
 *                       that it is a regular file, and only then opens it for
 *                       reading, non-blocking. Nothing else is ever opened
 *                       for real: opening a FIFO or device can block or act.
 *   target_file_read()  reads from the current offset to the end of the
 *                       file, within a budget of bytes (for all calls on that
 *                       budget) and of time (per call). When a limit stops
 *                       it, budget->exhausted says so and the caller logs
 *                       it (target_file_describe_budget gives the words).
 *
 * The time limit is checked between reads: a read that itself blocks (a
 * FUSE file served by the target) is not interrupted. */
#ifndef PROFCPU_TARGET_FILE_H
#define PROFCPU_TARGET_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct target_file_budget {
	uint64_t max_bytes;  /* over every read on this budget */
	double max_seconds;  /* per target_file_read() call */
	uint64_t bytes_read; /* so far */
	/* NULL until a limit stops the reading, then which one ("the size
	 * limit", "the time limit"); it stays set and no more is read. A sink
	 * may set it too, to stop at a limit of its own (a number of lines). */
	const char *stopped_by;
};

/* Opens `path` (absolute, as the target sees it) inside `root_fd`
 * (target_root_open(); -1 for this machine's own files) for reading, with
 * O_NONBLOCK. `flags` may add O_NOFOLLOW (for a shared folder such as this
 * machine's /tmp, where anyone may plant a symlink), else 0. Returns the fd,
 * or -1 with errno set; a path that is not a regular file (FIFO, device,
 * socket, directory) fails with EINVAL. */
int target_file_open(int root_fd, const char *path, int flags);

/* Receives the bytes read, in order; a chunk is at most 64 KiB. */
typedef void (*target_file_sink)(const char *bytes, size_t length, void *context);

/* Reads `fd` from its offset to its end, or until `budget` stops it, giving
 * each chunk to `sink`. Returns 0 (also when the budget stopped it), or -1
 * with errno set when a read fails; what was read before is kept. */
int target_file_read(int fd, struct target_file_budget *budget, target_file_sink sink,
		     void *context);

/* "stopped after 512 MiB, the limit for ..." style words for the log: how
 * the budget was hit. Returns `buffer`. */
const char *target_file_describe_budget(const struct target_file_budget *budget, char *buffer,
					size_t size);

#endif
