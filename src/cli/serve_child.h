/* A child of `profcpu serve` running profcpu's own binary (a capture's
 * collect, the watch): a crash or a signal there never takes the server
 * down. */
#ifndef PROFCPU_SERVE_CHILD_H
#define PROFCPU_SERVE_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* Spawns /proc/self/exe with `arguments` (NULL-terminated), stdin from
 * /dev/null, stdout to /dev/null when `quiet`, its stderr into a pipe
 * whose reading end goes to `messages_fd`, and no signal blocked: the
 * server blocks SIGINT and SIGTERM to wait for them, the child must get
 * them to write what it has and end. Returns 0 with its pid in `child`, or
 * an errno. */
int serve_child_spawn(const char *const *arguments, bool quiet, pid_t *child, int *messages_fd);

#endif
