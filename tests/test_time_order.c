/* The replay's queue: records handed back in time order, equal times in the
 * order added, whatever runs they came in, and those later than the bound
 * kept for the next take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "time_order.h"

#include <stdlib.h>

struct taken {
	uintptr_t ids[4096];
	size_t count;
};

static void take(void *record, void *context)
{
	struct taken *taken = context;

	taken->ids[taken->count++] = (uintptr_t)record;
}

/* Two CPUs' runs per round, as perf.data holds them, taken round by round
 * up to the latest time of the round before, as replay does. */
static void test_rounds_of_per_cpu_runs(void **state)
{
	static const uint64_t times[][6] = {
	    {10, 30, 50, 20, 40, 60}, /* round 1: CPU 0, then CPU 1 */
	    {70, 90, 55, 65, 80, 95}, /* round 2: CPU 1 lagged behind */
	};
	static const uintptr_t expected[] = {1, 4, 2, 5, 3, 9, 6, 10, 7, 11, 8, 12};
	struct time_order queue = {0};
	struct taken taken = {0};
	uintptr_t id = 1;

	(void)state;
	for (size_t i = 0; i < 6; i++)
		time_order_add(&queue, times[0][i], (void *)id++);
	time_order_take_until(&queue, 0, take, &taken);
	assert_int_equal(taken.count, 0);
	for (size_t i = 0; i < 6; i++)
		time_order_add(&queue, times[1][i], (void *)id++);
	time_order_take_until(&queue, 60, take, &taken);
	assert_int_equal(taken.count, 7); /* 10 .. 60 and round 2's 55 */
	assert_int_equal(time_order_count(&queue), 5);
	time_order_take_until(&queue, UINT64_MAX, take, &taken);
	assert_int_equal(taken.count, 12);
	for (size_t i = 0; i < 12; i++)
		assert_int_equal(taken.ids[i], expected[i]);
	time_order_release(&queue);
}

/* Any order: the same as a stable sort by time, equal times in the order
 * added, at every bound. */
static void test_any_order_is_a_stable_sort(void **state)
{
	struct time_order queue = {0};
	struct taken taken = {0};
	uint64_t times[4096];
	size_t added = 0;

	(void)state;
	srand(7);
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < 500; i++, added++) {
			times[added] = (uint64_t)(rand() % 300) + (uint64_t)round * 100;
			time_order_add(&queue, times[added], (void *)(uintptr_t)added);
		}
		time_order_take_until(&queue, (uint64_t)round * 100, take, &taken);
	}
	time_order_take_until(&queue, UINT64_MAX, take, &taken);
	assert_int_equal(taken.count, added);
	for (size_t i = 1; i < taken.count; i++) {
		uintptr_t before = taken.ids[i - 1], after = taken.ids[i];

		assert_true(times[before] < times[after] ||
			    (times[before] == times[after] && before < after));
	}
	time_order_release(&queue);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rounds_of_per_cpu_runs),
	    cmocka_unit_test(test_any_order_is_a_stable_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
