#include "off_cpu.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The name of a kernel location's innermost frame, or NULL. */
static const char *kernel_function(const struct profile *profile, uint32_t location_id)
{
	const struct profile_location *location = &profile->locations[location_id];

	return location->kernel && location->frame_count
		   ? profile->frames[location->first_frame].function
		   : NULL;
}

/* The sample with its stack ending at the scheduler's entry, whatever the
 * kernel: a thread leaves its CPU in __schedule, which kernels show once
 * (6.1's and 6.12's software event, the tracepoint) or not at all (6.18),
 * above `schedule` or another entry (preempt_schedule_irq, ...), and 5.10
 * shows that entry twice (the sample's address and its return address).
 * Without its __schedule frames and the leaf's repeat, every stack ends at
 * that entry once, and graphs of several kernels merge. */
static struct profile_sample at_scheduler_entry(struct profile *profile,
						const struct profile_sample *sample)
{
	struct profile_sample trimmed = *sample;
	const struct profile_stack *stack = &profile->stacks[sample->stack];
	const uint32_t *locations = &profile->stack_locations[stack->first];
	uint32_t skipped = 0;

	while (skipped + 1 < stack->depth) {
		const char *leaf = kernel_function(profile, locations[skipped]);
		const char *caller = kernel_function(profile, locations[skipped + 1]);

		if (!leaf ||
		    (strcmp(leaf, "__schedule") != 0 && (!caller || strcmp(leaf, caller) != 0)))
			break;
		skipped++;
	}
	if (skipped > 0) {
		size_t depth = stack->depth - skipped;
		uint32_t *kept = xmalloc(depth * sizeof(*kept)); /* interning may move the table */

		memcpy(kept, locations + skipped, depth * sizeof(*kept));
		trimmed.stack = profile_intern_stack(profile, kept, depth);
		free(kept);
	}
	return trimmed;
}

void off_cpu_add_switch(struct profile *profile, const struct profile_sample *sample,
			const struct perf_sched_switch *fields)
{
	grow_array((void **)&profile->switches, &profile->switch_capacity,
		   profile->switch_count + 1, sizeof(*profile->switches));
	profile->switches[profile->switch_count++] = (struct profile_switch){
	    .sample = at_scheduler_entry(profile, sample),
	    .next_comm = profile_intern_printable(profile, fields->next_comm),
	    .prev_prio = fields->prev_prio,
	    .next_pid = fields->next_pid,
	    .next_prio = fields->next_prio,
	    .prev_state = fields->prev_state,
	};
	if (fields->next_pid > 0)
		off_cpu_add_switch_in(profile, (uint32_t)fields->next_pid, sample->time);
}

/* The state a thread leaves with: TASK_INTERRUPTIBLE, or running
 * (0: preempted). */
enum { STATE_PREEMPTED = 0, STATE_SLEEPING = 1 };

/* How far back the record of a switch looks for its sample: the samples of
 * the other CPUs' switches come between. */
#define SWITCH_RECORD_LOOKBACK 64

void off_cpu_add_context_switch(struct profile *profile, const struct profile_sample *sample)
{
	grow_array((void **)&profile->switches, &profile->switch_capacity,
		   profile->switch_count + 1, sizeof(*profile->switches));
	profile->switches[profile->switch_count++] = (struct profile_switch){
	    .sample = at_scheduler_entry(profile, sample),
	    .next_comm = profile_intern_printable(profile, "?"),
	    .prev_prio = -1,
	    .next_pid = -1,
	    .next_prio = -1,
	    .prev_state = STATE_SLEEPING,
	    .awaiting_record = true,
	};
}

void off_cpu_add_switch_record(struct profile *profile, uint32_t tid, uint64_t time, bool preempted,
			       int32_t next_tid, const char *next_comm)
{
	size_t oldest = profile->switch_count > SWITCH_RECORD_LOOKBACK
			    ? profile->switch_count - SWITCH_RECORD_LOOKBACK
			    : 0;

	for (size_t i = profile->switch_count; i-- > oldest;) {
		struct profile_switch *left = &profile->switches[i];

		if (left->sample.tid != tid || left->sample.time > time)
			continue;
		if (!left->awaiting_record)
			return;
		left->awaiting_record = false;
		left->prev_state = preempted ? STATE_PREEMPTED : STATE_SLEEPING;
		if (next_tid >= 0) {
			left->next_pid = next_tid;
			left->next_comm = profile_intern_printable(profile, next_comm);
		}
		return;
	}
}

void off_cpu_add_switch_in(struct profile *profile, uint32_t tid, uint64_t time)
{
	grow_array((void **)&profile->switch_ins, &profile->switch_in_capacity,
		   profile->switch_in_count + 1, sizeof(*profile->switch_ins));
	profile->switch_ins[profile->switch_in_count++] = (struct profile_switch_in){time, tid};
}

void off_cpu_add_return(struct profile *profile, const struct profile_sample *returned)
{
	grow_array((void **)&profile->returns, &profile->return_capacity, profile->return_count + 1,
		   sizeof(*profile->returns));
	profile->returns[profile->return_count++] = (struct profile_return){*returned};
	off_cpu_add_switch_in(profile, returned->tid, returned->time);
}

/* A switch of one thread, out or in, for pairing. */
struct thread_switch {
	uint64_t time;
	uint32_t tid;
	uint32_t out; /* index of the switch-out + 1; 0 for a switch-in */
};

static int compare_switches(const void *a, const void *b)
{
	const struct thread_switch *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->out > y->out) - (x->out < y->out); /* a return before a leave */
}

static void add_interval(struct profile *profile, const struct profile_switch *left, uint64_t until)
{
	struct profile_sample interval = left->sample;

	interval.period = (until - left->sample.time + 500) / 1000;
	grow_array((void **)&profile->off_cpu, &profile->off_cpu_capacity,
		   profile->off_cpu_count + 1, sizeof(*profile->off_cpu));
	profile->off_cpu[profile->off_cpu_count++] = interval;
}

void off_cpu_pair(struct profile *profile, uint64_t end_time)
{
	size_t count = profile->switch_count + profile->switch_in_count;
	struct thread_switch *all = xcalloc(count + 1, sizeof(*all));
	const struct profile_switch *away = NULL; /* the thread's last switch-out */

	for (size_t i = 0; i < profile->switch_count; i++)
		all[i] = (struct thread_switch){profile->switches[i].sample.time,
						profile->switches[i].sample.tid, (uint32_t)i + 1};
	for (size_t i = 0; i < profile->switch_in_count; i++)
		all[profile->switch_count + i] = (struct thread_switch){
		    profile->switch_ins[i].time, profile->switch_ins[i].tid, 0};
	if (count > 1)
		qsort(all, count, sizeof(*all), compare_switches);
	for (size_t i = 0; i < count; i++) {
		if (all[i].tid == 0) /* the idle task */
			continue;
		if (all[i].out) {
			/* Two leaves without a return between: the later one counts. */
			away = &profile->switches[all[i].out - 1];
		} else if (away) {
			add_interval(profile, away, all[i].time);
			away = NULL;
		}
		if (away && (i + 1 == count || all[i + 1].tid != all[i].tid)) {
			if (end_time > away->sample.time)
				add_interval(profile, away, end_time);
			away = NULL;
		}
	}
	free(all);
}

struct profile off_cpu_view(const struct profile *profile)
{
	struct profile view = *profile;

	view.samples = profile->off_cpu;
	view.sample_count = profile->off_cpu_count;
	return view;
}

struct profile off_cpu_wall_view(const struct profile *profile)
{
	struct profile view = *profile;
	size_t count = profile->sample_count + profile->off_cpu_count;

	view.samples = xcalloc(count + 1, sizeof(*view.samples));
	view.sample_count = count;
	for (size_t i = 0; i < profile->sample_count; i++) {
		view.samples[i] = profile->samples[i];
		view.samples[i].period = (profile->samples[i].period + 500) / 1000;
	}
	for (size_t i = 0; i < profile->off_cpu_count; i++)
		view.samples[profile->sample_count + i] = profile->off_cpu[i];
	return view;
}

void off_cpu_view_release(struct profile *view)
{
	free(view->samples);
	view->samples = NULL;
}
