/* What the tests of a target's environment share: a real process started
 * with the environment a user would give it. */
#ifndef PROFCPU_TESTS_SLEEPING_PROCESS_H
#define PROFCPU_TESTS_SLEEPING_PROCESS_H

#include <sys/types.h>

/* Starts `sleep 30` with `environment` (NULL-ended) and waits until the
 * kernel shows it in /proc/PID/environ; its pid. */
pid_t sleeping_process_start(char *const *environment);

/* Kills and reaps it. */
void sleeping_process_stop(pid_t pid);

#endif
