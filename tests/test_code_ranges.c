/* code_ranges: ranges added between lookups (a jitdump growing while a
 * capture's walks look code up) answer every lookup as the same ranges
 * added all at once, sorted once. */
#include "code_ranges.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct added {
	uint64_t start, size, time;
	char name[32];
	bool removed;
};

static void add(struct code_ranges *ranges, const struct added *range)
{
	if (range->removed)
		code_ranges_remove(ranges, range->start, range->size, range->time);
	else
		code_ranges_add(ranges, range->start, range->size, range->time, range->name,
				strlen(range->name));
}

static void assert_same_answer(struct code_ranges *grown, struct code_ranges *whole,
			       uint64_t address, uint64_t time)
{
	struct code_range a, b;
	bool found = code_ranges_lookup(grown, address, time, &a);

	assert_int_equal(found, code_ranges_lookup(whole, address, time, &b));
	assert_int_equal(a.valid_until, b.valid_until);
	if (found) {
		assert_int_equal(a.start, b.start);
		assert_int_equal(a.size, b.size);
		assert_int_equal(a.time, b.time);
		assert_string_equal(a.name, b.name);
	}
}

/* Methods at addresses reused over time, stubs nesting code, moves
 * (removal and a new range), in batches of 1 to 40 with lookups between. */
static void test_added_between_lookups(void **state)
{
	enum { COUNT = 3000 };
	struct added *all = calloc(COUNT, sizeof(*all));
	struct code_ranges *grown = code_ranges_new(), *whole;
	size_t done = 0;

	(void)state;
	srand(7);
	for (size_t i = 0; i < COUNT; i++) {
		all[i].start = 0x10000 + (uint64_t)(rand() % 400) * 0x40;
		all[i].size = 0x10 + (uint64_t)(rand() % 8) * 0x30;
		all[i].time = (uint64_t)(rand() % 1000);
		all[i].removed = rand() % 10 == 0;
		snprintf(all[i].name, sizeof(all[i].name), "method_%zu", i);
	}
	while (done < COUNT) {
		size_t batch = 1 + (size_t)rand() % 40;

		for (; batch > 0 && done < COUNT; batch--)
			add(grown, &all[done++]);
		whole = code_ranges_new();
		for (size_t i = 0; i < done; i++)
			add(whole, &all[i]);
		for (int probe = 0; probe < 30; probe++)
			assert_same_answer(grown, whole, 0x10000 + (uint64_t)(rand() % 0x7000),
					   (uint64_t)(rand() % 1100));
		assert_int_equal(code_ranges_count(grown), code_ranges_count(whole));
		code_ranges_free(whole);
	}
	code_ranges_free(grown);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_added_between_lookups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
