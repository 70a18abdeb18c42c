/* Files of the profiled process, opened as that process sees them.
 *
 * profcpu runs privileged next to untrusted containers. A path taken from the
 * target (a mapping, a perf map) is resolved inside the target's root with
 * RESOLVE_IN_ROOT, so the target's absolute symlinks and ".." never lead out
 * of its root into the profiler's file system. On kernels without openat2
 * (before 5.6, or a seccomp filter that answers ENOSYS) the same resolution is
 * done component by component (target_root_openat_by_walk). */
#ifndef PROFCPU_TARGET_ROOT_H
#define PROFCPU_TARGET_ROOT_H

#include <stdbool.h>
#include <sys/types.h>

/* A directory handle on /proc/<pid>/root. It keeps the target's files
 * reachable after the target exits. Returns -1 with errno set on failure. */
int target_root_open(pid_t pid);

/* The pid as the process sees itself in its own PID namespace (the last
 * NSpid: field of /proc/<pid>/status): the number in the names of its /tmp
 * files. `pid` itself when unreadable. */
pid_t target_root_namespace_pid(pid_t pid);

/* Opens `path` (absolute, as the target sees it) inside the root `root_fd`.
 * With root_fd == -1, opens `path` in the profiler's own file system.
 * `flags` are open(2) flags; O_CLOEXEC is always added. Uses openat2, or
 * target_root_openat_by_walk() when the kernel has none. Returns -1 with
 * errno set on failure. */
int target_root_openat(int root_fd, const char *path, int flags);

/* False once openat2 answered ENOSYS: paths are then resolved by
 * target_root_openat_by_walk(). Lets callers say so in their log. */
bool target_root_has_openat2(void);

/* The fallback resolver: walks `path` one component at a time from `root_fd`
 * with O_NOFOLLOW, following each symlink itself (an absolute target restarts
 * at `root_fd`, ".." never climbs above it, at most 40 links), then opens the
 * last component with `flags`. Returns -1 with errno set on failure. */
int target_root_openat_by_walk(int root_fd, const char *path, int flags);

#endif
