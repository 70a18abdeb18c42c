/* Off-CPU time: from the scheduler's switches recorded with --off-cpu, how
 * long each thread was away from the CPU and with which stack it left. A
 * thread that leaves (switch-out) and comes back (switch-in: a later
 * sched_switch naming it as next, or the kernel's switch record) was off
 * CPU in between, blocked or waiting for a CPU.
 *
 * The switches come from the tracepoint sched:sched_switch, whose fields
 * say everything, or from the software event context-switches, whose
 * sample has the stack and whose following switch record
 * (PERF_RECORD_SWITCH) whether the thread was preempted and, recorded per
 * CPU, which thread took the CPU. */
#ifndef PROFCPU_OFF_CPU_H
#define PROFCPU_OFF_CPU_H

#include "perf_data.h"
#include "profile.h"

/* Adds the switch-out `sample` (its stack and thread, from the tracepoint's
 * sample) with the tracepoint's `fields`, and the switch-in of the thread
 * taking the CPU. */
void off_cpu_add_switch(struct profile *profile, const struct profile_sample *sample,
			const struct perf_sched_switch *fields);

/* Adds the switch-out `sample` of the software event context-switches,
 * as a blocked thread until off_cpu_add_switch_record() says more. */
void off_cpu_add_context_switch(struct profile *profile, const struct profile_sample *sample);

/* The kernel's switch record of thread `tid` leaving its CPU at `time`:
 * `preempted` (still runnable) or blocked, and `next_tid` named
 * `next_comm`, the thread taking the CPU, or -1 and NULL when the record
 * does not say (per-thread records). Completes that thread's last switch of
 * the software event; changes nothing after a tracepoint's. */
void off_cpu_add_switch_record(struct profile *profile, uint32_t tid, uint64_t time, bool preempted,
			       int32_t next_tid, const char *next_comm);

/* Notes that thread `tid` came back onto a CPU at `time`. */
void off_cpu_add_switch_in(struct profile *profile, uint32_t tid, uint64_t time);

/* The kernel's per-thread record of `returned`'s thread coming back onto
 * its CPU (its time, thread and CPU; no stack): a switch-in, kept to be
 * printed (struct profile_return). */
void off_cpu_add_return(struct profile *profile, const struct profile_sample *returned);

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
