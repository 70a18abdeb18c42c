/* The budget of lookups in runtimes' memory (lookup_budget.h): CPU spent
 * and wall time waited each run it out, whichever comes first. The
 * windows are long enough that none starts anew while a test runs, however
 * loaded the machine. */
#include "lookup_budget.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

static void spend_cpu(double seconds)
{
	struct timespec now;

	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	while (now.tv_sec + now.tv_nsec / 1e9 < seconds);
}

/* 0.1 s of CPU of a 100 s window at 0.1%: spent; the wall share is not. */
static void test_cpu_runs_out(void **state)
{
	struct lookup_budget budget;
	struct timespec start;

	(void)state;
	lookup_budget_init(&budget, 100, 0.001, 0.5);
	assert_true(lookup_budget_left(&budget));
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	struct lookup_clock began = lookup_budget_begin();

	spend_cpu(start.tv_sec + start.tv_nsec / 1e9 + 0.11);
	lookup_budget_spend(&budget, began);
	assert_false(lookup_budget_left(&budget));
	assert_true(lookup_budget_cpu_spent(&budget) >= 100000000);
	/* a new window (the agent's next period) has it all again */
	lookup_budget_start(&budget, 100);
	assert_true(lookup_budget_left(&budget));
}

/* 0.15 s of waiting, no CPU, of a 100 s window at 0.1% of wall time: the
 * wall share is spent, the CPU share is not; a lookup's reads then get no
 * time. */
static void test_waiting_runs_out(void **state)
{
	struct lookup_budget budget;

	(void)state;
	lookup_budget_init(&budget, 100, 0.5, 0.001);
	assert_true(lookup_budget_wall_left(&budget) > 0.09);
	struct lookup_clock began = lookup_budget_begin();

	nanosleep(&(struct timespec){.tv_nsec = 150000000}, NULL);
	lookup_budget_spend(&budget, began);
	assert_false(lookup_budget_left(&budget));
	assert_true(lookup_budget_wall_left(&budget) == 0);
	assert_true(lookup_budget_cpu_spent(&budget) < 50000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu_runs_out),
	    cmocka_unit_test(test_waiting_runs_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
