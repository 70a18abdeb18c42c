/* Off-CPU time from scheduler switches: each switch-out paired with the same
 * thread's next return, weighed in microseconds, folded by the stack the
 * thread left with; and the wall view of on- and off-CPU time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "off_cpu.h"
#include "profile.h"

#include <string.h>

#define MS 1000000ULL /* nanoseconds */

/* A one-frame stack named `function`. */
static uint32_t stack_of(struct profile *profile, uint64_t address, const char *function)
{
	struct resolved_location resolved = {
	    .module = "/usr/bin/service", .kind = FRAME_NATIVE, .frame_count = 1};
	uint32_t location;

	resolved.frames[0] =
	    (struct resolved_frame){.function = function, .offset = 0, .named = true};
	location = profile_add_location(profile, 7, address, false, &resolved);
	return profile_intern_stack(profile, &location, 1);
}

static struct profile_sample sample(struct profile *profile, uint32_t tid, uint64_t time,
				    uint32_t stack)
{
	return (struct profile_sample){
	    .time = time,
	    .pid = 7,
	    .tid = tid,
	    .stack = stack,
	    .process_name = string_table_intern(profile->strings, "service"),
	    .thread_name = string_table_intern(profile->strings, "worker")};
}

/* Thread `tid` leaves for thread `next` at `time`. */
static void leave(struct profile *profile, uint32_t tid, uint64_t time, uint32_t stack,
		  int32_t next)
{
	struct profile_sample left = sample(profile, tid, time, stack);
	struct perf_sched_switch fields = {
	    .prev_pid = (int32_t)tid, .prev_state = 1, .next_pid = next};

	strcpy(fields.next_comm, "other");
	off_cpu_add_switch(profile, &left, &fields);
}

static uint64_t off_cpu_of(const struct profile *profile, uint32_t tid)
{
	uint64_t total = 0;

	for (size_t i = 0; i < profile->off_cpu_count; i++)
		if (profile->off_cpu[i].tid == tid)
			total += profile->off_cpu[i].period;
	return total;
}

static void pairs_each_leave_with_the_threads_next_return(void **state)
{
	struct profile profile;
	uint32_t wait, sleep;

	(void)state;
	profile_init(&profile);
	wait = stack_of(&profile, 0x1000, "wait_for_lock");
	sleep = stack_of(&profile, 0x2000, "nanosleep");
	/* Thread 10 leaves for thread 11, which returns at once; 10 comes
	 * back 30 ms later through a switch record, leaves again and is
	 * still away when the capture ends 5 ms later. Thread 11 leaves for
	 * thread 10 at 50 ms: its return is 10's switch-out naming it. */
	leave(&profile, 10, 100 * MS, wait, 11);
	off_cpu_add_switch_in(&profile, 10, 130 * MS);
	leave(&profile, 11, 140 * MS, sleep, 10);
	leave(&profile, 10, 145 * MS, wait, 11);
	off_cpu_pair(&profile, 150 * MS);

	assert_int_equal(off_cpu_of(&profile, 10), 30000 + 5000);
	assert_int_equal(off_cpu_of(&profile, 11), 5000);
	for (size_t i = 0; i < profile.off_cpu_count; i++)
		assert_int_equal(profile.off_cpu[i].stack,
				 profile.off_cpu[i].tid == 10 ? wait : sleep);
	profile_release(&profile);
}

/* A stack of kernel frames named `functions` (leaf first, NULL-ended) above
 * the user frame of `user_stack`. */
static uint32_t kernel_stack(struct profile *profile, uint32_t user_stack,
			     const char *const *functions)
{
	uint32_t locations[8];
	size_t depth = 0;

	for (; functions[depth]; depth++) {
		/* one address per function, as the kernel's symbols give */
		uint64_t address = 0xffffffff81000000 + 0x100 * strlen(functions[depth]) +
				   (uint64_t)functions[depth][2];
		struct resolved_location resolved = {
		    .module = "[kernel.kallsyms]", .kind = FRAME_NATIVE, .frame_count = 1};

		resolved.frames[0] = (struct resolved_frame){
		    .function = functions[depth], .offset = 0, .named = true};
		locations[depth] = profile_find_location(profile, 7, address, true);
		if (locations[depth] == PROFILE_NOT_FOUND)
			locations[depth] =
			    profile_add_location(profile, 7, address, true, &resolved);
	}
	locations[depth++] = profile->stack_locations[profile->stacks[user_stack].first];
	return profile_intern_stack(profile, locations, depth);
}

static void every_kernels_leave_ends_at_the_scheduler_entry(void **state)
{
	/* What 5.10, 6.1 and 6.12, and 6.18 put above a nanosleep, leaf first
	 * (5.10's software event: the sample's address, then its return address). */
	static const char *const kernel_5_10[] = {"schedule", "schedule", "do_nanosleep", NULL};
	static const char *const kernel_6_1[] = {"__schedule", "schedule", "do_nanosleep", NULL};
	static const char *const kernel_6_18[] = {"schedule", "do_nanosleep", NULL};
	static const char *const preempted[] = {"__schedule", "preempt_schedule_irq", NULL};
	struct profile profile;
	uint32_t sleep, stacks[4];
	struct profile_sample left;

	(void)state;
	profile_init(&profile);
	sleep = stack_of(&profile, 0x2000, "nanosleep");
	stacks[0] = kernel_stack(&profile, sleep, kernel_5_10);
	stacks[1] = kernel_stack(&profile, sleep, kernel_6_1);
	stacks[2] = kernel_stack(&profile, sleep, kernel_6_18);
	stacks[3] = kernel_stack(&profile, sleep, preempted);
	leave(&profile, 10, 100 * MS, stacks[0], 0);
	left = sample(&profile, 11, 101 * MS, stacks[1]);
	off_cpu_add_context_switch(&profile, &left);
	leave(&profile, 12, 102 * MS, stacks[2], 0);
	leave(&profile, 13, 103 * MS, stacks[3], 0);

	assert_int_equal(profile.switch_count, 4);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(profile.switches[i].sample.stack, stacks[2]);
	{
		const struct profile_stack *stack =
		    &profile.stacks[profile.switches[3].sample.stack];
		const struct profile_location *leaf =
		    &profile.locations[profile.stack_locations[stack->first]];

		assert_int_equal(stack->depth, 2);
		assert_string_equal(profile.frames[leaf->first_frame].function,
				    "preempt_schedule_irq");
	}
	profile_release(&profile);
}

static void a_leave_whose_return_was_lost_is_dropped(void **state)
{
	struct profile profile;
	uint32_t wait;

	(void)state;
	profile_init(&profile);
	wait = stack_of(&profile, 0x1000, "wait_for_lock");
	/* A return was lost between two leaves: the first leave is dropped,
	 * not stretched over the time the thread ran. */
	leave(&profile, 10, 100 * MS, wait, 0);
	leave(&profile, 10, 200 * MS, wait, 0);
	off_cpu_add_switch_in(&profile, 10, 210 * MS);
	off_cpu_pair(&profile, 300 * MS);

	assert_int_equal(off_cpu_of(&profile, 10), 10000);
	profile_release(&profile);
}

static void the_switch_record_completes_the_software_events_switch(void **state)
{
	struct profile profile;
	struct profile_sample left, preempted;
	uint32_t wait, work;

	(void)state;
	profile_init(&profile);
	wait = stack_of(&profile, 0x1000, "wait_for_lock");
	work = stack_of(&profile, 0x3000, "parse_request");
	/* The software event's sample comes a few microseconds before the
	 * kernel's switch record of the same leave; another thread's leave
	 * comes between. Thread 10 blocks (per-thread record: the next
	 * thread is unknown); thread 11 is preempted for thread 12 (per-CPU
	 * record); thread 11's record arrives twice: the second changes
	 * nothing. */
	left = sample(&profile, 10, 100 * MS, wait);
	preempted = sample(&profile, 11, 100 * MS + 1, work);
	off_cpu_add_context_switch(&profile, &left);
	off_cpu_add_context_switch(&profile, &preempted);
	off_cpu_add_switch_record(&profile, 10, 100 * MS + 3, false, -1, NULL);
	off_cpu_add_switch_record(&profile, 11, 100 * MS + 4, true, 12, "timer");
	off_cpu_add_switch_record(&profile, 11, 100 * MS + 5, false, 0, "swapper");
	off_cpu_add_switch_in(&profile, 10, 130 * MS);
	off_cpu_add_switch_in(&profile, 11, 101 * MS);
	off_cpu_pair(&profile, 150 * MS);

	assert_int_equal(profile.switch_count, 2);
	assert_int_equal(profile.switches[0].prev_state, 1); /* S: blocked */
	assert_int_equal(profile.switches[0].next_pid, -1);
	assert_string_equal(profile.switches[0].next_comm, "?");
	assert_int_equal(profile.switches[0].prev_prio, -1);
	assert_int_equal(profile.switches[1].prev_state, 0); /* R: preempted */
	assert_int_equal(profile.switches[1].next_pid, 12);
	assert_string_equal(profile.switches[1].next_comm, "timer");
	assert_int_equal(off_cpu_of(&profile, 10), 30000);
	assert_int_equal(off_cpu_of(&profile, 11), 1000);
	profile_release(&profile);
}

static void a_switch_record_after_a_tracepoints_switch_changes_nothing(void **state)
{
	struct profile profile;
	uint32_t wait;

	(void)state;
	profile_init(&profile);
	wait = stack_of(&profile, 0x1000, "wait_for_lock");
	/* Per thread, the tracepoint comes with switch records for the
	 * returns, and their leaves too: the tracepoint's fields stand. */
	leave(&profile, 10, 100 * MS, wait, 11);
	off_cpu_add_switch_record(&profile, 10, 100 * MS + 2, true, -1, NULL);

	assert_int_equal(profile.switches[0].prev_state, 1);
	assert_int_equal(profile.switches[0].next_pid, 11);
	assert_string_equal(profile.switches[0].next_comm, "other");
	profile_release(&profile);
}

static void wall_view_puts_cpu_and_off_cpu_time_on_one_scale(void **state)
{
	struct profile profile, wall;
	struct profile_sample on_cpu;
	uint32_t work, wait;

	(void)state;
	profile_init(&profile);
	work = stack_of(&profile, 0x3000, "parse_request");
	wait = stack_of(&profile, 0x1000, "wait_for_lock");
	on_cpu = sample(&profile, 10, 90 * MS, work);
	on_cpu.period = 10 * MS; /* cpu-clock: nanoseconds of CPU time */
	profile_add_sample(&profile, &on_cpu);
	leave(&profile, 10, 100 * MS, wait, 0);
	off_cpu_add_switch_in(&profile, 10, 120 * MS);
	off_cpu_pair(&profile, 150 * MS);

	wall = off_cpu_wall_view(&profile);
	assert_int_equal(wall.sample_count, 2);
	assert_int_equal(wall.samples[0].period, 10000); /* microseconds */
	assert_int_equal(wall.samples[1].period, 20000);
	off_cpu_view_release(&wall);
	profile_release(&profile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pairs_each_leave_with_the_threads_next_return),
	    cmocka_unit_test(a_leave_whose_return_was_lost_is_dropped),
	    cmocka_unit_test(every_kernels_leave_ends_at_the_scheduler_entry),
	    cmocka_unit_test(the_switch_record_completes_the_software_events_switch),
	    cmocka_unit_test(a_switch_record_after_a_tracepoints_switch_changes_nothing),
	    cmocka_unit_test(wall_view_puts_cpu_and_off_cpu_time_on_one_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
