/* Sampling more than one process: every process of the machine, or every
 * process of one cgroup (a container, a pod), one event per CPU. */
#ifndef PROFCPU_SAMPLING_SCOPE_H
#define PROFCPU_SAMPLING_SCOPE_H

#include "dotnet_diagnostics.h"
#include "target_process.h"

#include <stdio.h>

/* Fills `target` with the pseudo process TARGET_EVERY_PROCESS: every
 * process, or with `cgroup` (a cgroup directory, may be NULL) every process
 * of that cgroup, also those started while sampling. Returns -1 after one
 * line saying why `cgroup` cannot be used. */
int sampling_scope_open(const char *cgroup, struct target_process *target);

/* Switches on the perf map and jitdump of every .NET process in `target`'s
 * scope (dotnet_ensure_perfmap(): .NET 8+ through its diagnostics socket),
 * so that their JIT frames are named. Writes into those processes' /tmp:
 * only when the user asks (--enable-perfmaps). Returns how many it turned
 * on (their owners had not), listed in `*switched` (malloc'd), to turn off
 * when done (dotnet_turn_off_perfmaps). */
size_t sampling_scope_enable_perfmaps(const struct target_process *target, FILE *log,
				      struct switched_perfmap **switched);

/* The cgroup directory of a container: the first directory under the
 * hierarchy perf events use (the v1 perf_event one, else cgroup v2) whose
 * name contains `container_id` (podman's and docker's full or short id, or
 * kubectl's containerd://ID), or of the one running container named so
 * (container_name.h). Returns it (malloc'd), or NULL after one line saying
 * it was not found. */
char *sampling_scope_container_cgroup(const char *container_id);

#endif
