/* The process being profiled, as /proc describes it. */
#ifndef PROFCPU_TARGET_PROCESS_H
#define PROFCPU_TARGET_PROCESS_H

#include "process_maps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The pid of the pseudo process "every process" (sampling_scope.h). */
#define TARGET_EVERY_PROCESS ((pid_t)-1)

struct target_process {
	pid_t pid;	     /* as the profiler sees it, or TARGET_EVERY_PROCESS */
	pid_t namespace_pid; /* as the target sees itself (last NSpid: field) */
	char comm[16];
	time_t start_time;  /* when it started, seconds since the epoch */
	int root_fd;	    /* /proc/<pid>/root, for the target's files; -1 if unreadable */
	int pidfd;	    /* readable when the target exits; -1 if unsupported */
	bool runs_dotnet;   /* ran .NET when it was opened (target_process_runs_dotnet) */
	const char *cgroup; /* TARGET_EVERY_PROCESS: only this cgroup's, or NULL */
};

/* Checks that `pid` names a user-space process that can be profiled and
 * fills `target`. On failure prints one line saying why and what to do, and
 * returns -1. */
int target_process_open(pid_t pid, struct target_process *target);
void target_process_close(struct target_process *target);

/* The process's current threads. Returns how many were put in `*tids`
 * (malloc'd), 0 if the process is gone. */
size_t target_process_threads(pid_t pid, pid_t **tids);

/* A process this profiler can see, for suggesting a better target. */
struct process_entry {
	pid_t pid, parent;
	char comm[16];
	unsigned long long cpu_ticks; /* user + system time so far */
};

/* Every user-space process in /proc but the profiler itself. Returns how many were put
 * in `*entries` (malloc'd). */
size_t target_process_list(struct process_entry **entries);

/* The one process whose name (comm) is `name`, other than profcpu itself.
 * On none or several, prints which and returns -1. */
pid_t target_process_find_by_name(const char *name);

/* The pid as the process sees itself in its own PID namespace (the last
 * NSpid: field of its status); `pid` itself when unreadable. */
pid_t target_process_namespace_pid(pid_t pid);

/* When `pid` started, in clock ticks after boot (field 22 of its stat): the
 * key a .NET runtime puts in its diagnostics socket's name. 0 if unknown. */
unsigned long long target_process_start_ticks(pid_t pid);

/* The user and system time `pid` used so far, in clock ticks (fields 14
 * and 15 of its stat); false when it is gone. */
bool target_process_cpu_ticks(pid_t pid, unsigned long long *ticks);

/* Whether the process maps a file named `file_name` (e.g. libcoreclr.so). */
bool target_process_maps_file(pid_t pid, const char *file_name);

/* Whether the process runs .NET's runtime (CoreCLR), which has a
 * diagnostics socket and writes perf maps: it maps libcoreclr.so (started
 * by dotnet, or self-contained), or its executable has the runtime linked
 * in (a single-file app). A NativeAOT app, compiled ahead of time with no
 * JIT, does not. */
bool target_process_runs_dotnet(pid_t pid);

#endif
