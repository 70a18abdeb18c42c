/* Folding a symbolized profile into stacks of function names, and the
 * folded text written from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "emit.h"
#include "profile.h"

#include <stdlib.h>
#include <string.h>

/* A location named by `count` frames, innermost first. */
static uint32_t add_location(struct profile *profile, uint64_t address, enum frame_kind kind,
			     const char *module, size_t count, const char *const *functions)
{
	struct resolved_location resolved = {.module = module, .kind = kind, .frame_count = count};

	for (size_t i = 0; i < count; i++)
		resolved.frames[i] = (struct resolved_frame){functions[i], 0, true};
	return profile_add_location(profile, 42, address, kind == FRAME_KERNEL, &resolved);
}

static void add_samples(struct profile *profile, const uint32_t *leaf_first, size_t depth,
			int count)
{
	struct profile_sample sample = {
	    .pid = 42,
	    .tid = 42,
	    .stack = profile_intern_stack(profile, leaf_first, depth),
	    .process_name = string_table_intern(profile->strings, "app"),
	    .thread_name = string_table_intern(profile->strings, "worker"),
	};

	while (count-- > 0)
		profile_add_sample(profile, &sample);
}

static char *folded_text(const struct profile *profile, uint64_t *total)
{
	struct folded_profile folded;
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	profile_fold(profile, &folded);
	assert_int_equal(emit_folded(&folded, out), 0);
	fclose(out);
	*total = folded.total;
	folded_profile_release(&folded);
	return text;
}

static void test_root_first_merged_by_function_and_sorted(void **state)
{
	struct profile profile;
	uint64_t total;
	char *text;

	(void)state;
	profile_init(&profile);
	/* Two addresses in hot(): different stacks of addresses, one folded
	 * stack of names. */
	uint32_t main_location =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"main"});
	uint32_t hot_a =
	    add_location(&profile, 0x2000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"hot"});
	uint32_t hot_b =
	    add_location(&profile, 0x2004, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"hot"});
	uint32_t cold =
	    add_location(&profile, 0x3000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"cold"});

	add_samples(&profile, (uint32_t[]){hot_a, main_location}, 2, 3);
	add_samples(&profile, (uint32_t[]){hot_b, main_location}, 2, 2);
	add_samples(&profile, (uint32_t[]){cold, main_location}, 2, 1);
	assert_int_equal(profile.stack_count, 3);

	text = folded_text(&profile, &total);
	assert_string_equal(text, "app;main;cold 1\napp;main;hot 5\n");
	assert_int_equal(total, 6);
	free(text);
	profile_release(&profile);
}

static void test_inlined_frames_and_unsafe_characters(void **state)
{
	struct profile profile;
	uint64_t total;
	char *text;

	(void)state;
	profile_init(&profile);
	/* One address holding an inlined call: innermost first. */
	uint32_t inlined = add_location(&profile, 0x1000, FRAME_NATIVE, "/lib/x.so", 2,
					(const char *[]){"inner_inlined", "outer"});
	uint32_t odd = add_location(&profile, 0x5000, FRAME_JIT, "/tmp/perf-42.map", 1,
				    (const char *[]){"weird;name\nwith breaks"});
	uint32_t kernel = add_location(&profile, 0xffffffff81000000, FRAME_KERNEL,
				       "[kernel.kallsyms]", 1, (const char *[]){"do_syscall_64"});

	add_samples(&profile, (uint32_t[]){kernel, inlined, odd}, 3, 4);
	text = folded_text(&profile, &total);
	assert_string_equal(text,
			    "app;weird:name?with breaks;outer;inner_inlined;do_syscall_64 4\n");
	free(text);
	profile_release(&profile);
}

static void test_locations_and_stacks_are_interned(void **state)
{
	struct profile profile;

	(void)state;
	profile_init(&profile);
	uint32_t first =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"f"});

	assert_int_equal(profile_find_location(&profile, 42, 0x1000, false), first);
	assert_int_equal(profile_find_location(&profile, 42, 0x1000, true), PROFILE_NOT_FOUND);
	assert_int_equal(profile_find_location(&profile, 43, 0x1000, false), PROFILE_NOT_FOUND);
	/* Many locations and stacks: the indexes grow and still find them. */
	for (uint32_t i = 1; i < 20000; i++) {
		uint32_t location = add_location(&profile, 0x1000 + i, FRAME_NATIVE, "/bin/app", 1,
						 (const char *[]){"f"});
		uint32_t stack[2] = {location, first};

		assert_int_equal(profile_intern_stack(&profile, stack, 2), i - 1);
	}
	for (uint32_t i = 1; i < 20000; i++) {
		uint32_t stack[2] = {i, first};

		assert_int_equal(profile_find_location(&profile, 42, 0x1000 + i, false), i);
		assert_int_equal(profile_intern_stack(&profile, stack, 2), i - 1);
	}
	profile_release(&profile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_root_first_merged_by_function_and_sorted),
	    cmocka_unit_test(test_inlined_frames_and_unsafe_characters),
	    cmocka_unit_test(test_locations_and_stacks_are_interned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
