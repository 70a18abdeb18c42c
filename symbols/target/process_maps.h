/* The mappings of a live process, as /proc/<pid>/maps lists them. */
#ifndef PROFCPU_PROCESS_MAPS_H
#define PROFCPU_PROCESS_MAPS_H

#include <stdint.h>
#include <sys/types.h>

/* A mapping as a line of /proc/<pid>/maps shows it:
 * "start-end perms offset major:minor inode   path", path optional. */
struct process_mapping {
	uint64_t start, end, offset, inode;
	unsigned major, minor;
	char permissions[5]; /* "r-xp" */
	const char *path;    /* "" for anonymous memory; valid during the visit */
};

/* Calls `visit` for each mapping of the process, in address order, until it
 * returns non-zero. Returns that value, or 0 (also when the process is
 * gone). */
int target_process_for_each_mapping(
    pid_t pid, int (*visit)(const struct process_mapping *mapping, void *context), void *context);

#endif
