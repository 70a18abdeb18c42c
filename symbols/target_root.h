/* Files of the profiled process, opened as that process sees them.
 *
 * profcpu runs privileged next to untrusted containers. A path taken from the
 * target (a mapping, a perf map) is resolved inside the target's root with
 * RESOLVE_IN_ROOT, so the target's absolute symlinks and ".." never lead out
 * of its root into the profiler's file system. */
#ifndef PROFCPU_TARGET_ROOT_H
#define PROFCPU_TARGET_ROOT_H

#include <sys/types.h>

/* A directory handle on /proc/<pid>/root. It keeps the target's files
 * reachable after the target exits. Returns -1 with errno set on failure. */
int target_root_open(pid_t pid);

/* Opens `path` (absolute, as the target sees it) inside the root `root_fd`.
 * With root_fd == -1, opens `path` in the profiler's own file system.
 * `flags` are open(2) flags; O_CLOEXEC is always added. Returns -1 with errno
 * set on failure. */
int target_root_openat(int root_fd, const char *path, int flags);

#endif
