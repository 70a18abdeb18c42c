/* Off-CPU time: from the scheduler's switches recorded with --off-cpu
 * (sched:sched_switch), how long each thread was away from the CPU and with
 * which stack it left. A thread that leaves (switch-out) and comes back
 * (switch-in: a later sched_switch naming it as next, or the kernel's switch
 * record) was off CPU in between, blocked or waiting for a CPU. */
#ifndef PROFCPU_OFF_CPU_H
#define PROFCPU_OFF_CPU_H

#include "perf_data.h"
#include "profile.h"

/* Adds the switch-out `sample` (its stack and thread, from the tracepoint's
 * sample) with the tracepoint's `fields`, and the switch-in of the thread
 * taking the CPU. */
void off_cpu_add_switch(struct profile *profile, const struct profile_sample *sample,
			const struct perf_sched_switch *fields);

/* Notes that thread `tid` came back onto a CPU at `time`. */
void off_cpu_add_switch_in(struct profile *profile, uint32_t tid, uint64_t time);

/* Pairs each switch-out with the same thread's next switch-in into
 * profile->off_cpu: one sample per interval, period = microseconds off
 * CPU, stack = the one it left with. A thread still away at `end_time` (the
 * capture's last record) is counted until then. */
void off_cpu_pair(struct profile *profile, uint64_t end_time);

/* `profile` with the off-CPU intervals as its samples, for profile_fold()
 * with weigh_by_period. Shares everything with `profile`: do not release. */
struct profile off_cpu_view(const struct profile *profile);

/* `profile` with on-CPU and off-CPU time as its samples, both weighed in
 * microseconds (an on-CPU sample by its period of CPU time), so that both
 * share one scale: for profile_fold() with weigh_by_period. Release it with
 * off_cpu_view_release(). */
struct profile off_cpu_wall_view(const struct profile *profile);
void off_cpu_view_release(struct profile *view);

#endif
