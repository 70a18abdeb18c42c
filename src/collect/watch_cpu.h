/* The CPU a watched target used over the last second (profcpu watch
 * --cpu), from the kernel's counters rather than the samples: a process's
 * user and system time (/proc/PID/stat), a cgroup's usage (its cpu.stat),
 * or the machine's busy time (/proc/stat). */
#ifndef PROFCPU_WATCH_CPU_H
#define PROFCPU_WATCH_CPU_H

#include "target_process.h"

#include <stdbool.h>
#include <stdint.h>

/* Readings at least a tenth of a second apart, over the last two seconds. */
#define WATCH_CPU_READINGS 24

struct watch_cpu {
	const struct target_process *target;
	struct {
		uint64_t at, cpu; /* CLOCK_MONOTONIC and CPU time, nanoseconds */
	} readings[WATCH_CPU_READINGS];
	size_t count, next;
};

/* The target's CPU time so far in nanoseconds; false when it cannot be
 * read (the process is gone, a cgroup without cpu.stat). */
bool watch_cpu_time(const struct target_process *target, uint64_t *nanoseconds);

/* Reads the counter at `now` (CLOCK_MONOTONIC nanoseconds) unless the
 * last reading is less than 0.1 s old. */
void watch_cpu_read(struct watch_cpu *cpu, uint64_t now);

/* Percent of one core over the last second (from the reading closest to a
 * second old, at least 0.9 s back); false until there is one. */
bool watch_cpu_percent(const struct watch_cpu *cpu, double *percent);

#endif
