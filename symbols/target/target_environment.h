/* The environment a process started with, /proc/<pid>/environ: where its
 * runtime puts the files and the socket a profiler reads depends on it
 * (TMPDIR, DOTNET_PerfMapJitDumpPath). The process wrote it: hostile input,
 * read within TARGET_ENVIRONMENT_LIMIT bytes. */
#ifndef PROFCPU_TARGET_ENVIRONMENT_H
#define PROFCPU_TARGET_ENVIRONMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What the kernel lets arguments and environment take together under the
 * default 8 MiB stack limit: a larger environment is read this far only. */
#define TARGET_ENVIRONMENT_LIMIT (2u << 20)

/* Copies the value of the variable `name` in the environment of `pid` into
 * `value` (`size` bytes, NUL included). False when the process has no such
 * variable, its environment is unreadable, or the value does not fit. */
bool target_environment_value(pid_t pid, const char *name, char *value, size_t size);

/* The same search over `length` bytes of an environ file's contents
 * ("NAME=VALUE" strings, each ended by a NUL; the last may be cut). */
bool target_environment_find(const char *environment, size_t length, const char *name, char *value,
			     size_t size);

#endif
