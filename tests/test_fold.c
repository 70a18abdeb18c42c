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
		resolved.frames[i] =
		    (struct resolved_frame){.function = functions[i], .offset = 0, .named = true};
	return profile_add_location(profile, 42, address, kind == FRAME_KERNEL, &resolved);
}

/* A location the perf map names `name`. */
static uint32_t add_jit_location(struct profile *profile, uint64_t address, const char *name)
{
	return add_location(profile, address, FRAME_JIT, "/tmp/perf-42.map", 1,
			    (const char *[]){name});
}

/* A location no symbol names: the resolver calls it after its module. */
static uint32_t add_unnamed_location(struct profile *profile, uint64_t address,
				     const char *module_name)
{
	struct resolved_location resolved = {
	    .module = "/lib/libcoreclr.so", .kind = FRAME_NATIVE, .frame_count = 1};

	resolved.frames[0] =
	    (struct resolved_frame){.function = module_name, .offset = 0, .named = false};
	return profile_add_location(profile, 42, address, false, &resolved);
}

static void add_thread_samples(struct profile *profile, const uint32_t *leaf_first, size_t depth,
			       int count, uint32_t tid, const char *thread_name)
{
	struct profile_sample sample = {
	    .pid = 42,
	    .tid = tid,
	    .stack = profile_intern_stack(profile, leaf_first, depth),
	    .process_name = string_table_intern(profile->strings, "app"),
	    .thread_name = string_table_intern(profile->strings, thread_name),
	};

	while (count-- > 0)
		profile_add_sample(profile, &sample);
}

static void add_samples(struct profile *profile, const uint32_t *leaf_first, size_t depth,
			int count)
{
	add_thread_samples(profile, leaf_first, depth, count, 42, "worker");
}

static char *folded_text_with(const struct profile *profile, const struct fold_options *options,
			      uint64_t *total)
{
	struct folded_profile folded;
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	profile_fold(profile, options, &folded);
	assert_int_equal(emit_folded(&folded, out), 0);
	fclose(out);
	*total = folded.total;
	folded_profile_release(&folded);
	return text;
}

static char *folded_text(const struct profile *profile, uint64_t *total)
{
	return folded_text_with(profile, NULL, total);
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
	assert_string_equal(text, "worker;main;cold 1\nworker;main;hot 5\n");
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
			    "worker;weird:name?with breaks;outer;inner_inlined;do_syscall_64 4\n");
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

/* A sample without frames (a damaged record) has the empty stack, interned
 * like any other, also as the profile's first. */
static void test_empty_stack_is_interned(void **state)
{
	struct profile profile;
	uint32_t location, stack[1];

	(void)state;
	profile_init(&profile);
	assert_int_equal(profile_intern_stack(&profile, NULL, 0), 0);
	location =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"f"});
	stack[0] = location;
	assert_int_equal(profile_intern_stack(&profile, stack, 1), 1);
	assert_int_equal(profile_intern_stack(&profile, NULL, 0), 0);
	assert_int_equal(profile_intern_stack(&profile, stack, 1), 1);
	profile_release(&profile);
}

/* Stacks start with the thread's name, numbered threads of a pool as one;
 * by thread id or by process when asked. */
static void test_grouped_by_thread_tid_or_process(void **state)
{
	struct profile profile;
	uint64_t total;
	char *text;

	(void)state;
	profile_init(&profile);
	uint32_t run =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"run"});

	add_thread_samples(&profile, &run, 1, 2, 43, ".NET TP Worker");
	add_thread_samples(&profile, &run, 1, 3, 44, ".NET TP Worker");
	add_thread_samples(&profile, &run, 1, 1, 45, "pool-1-thread-1");
	add_thread_samples(&profile, &run, 1, 1, 46, "pool-1-thread-12");
	add_thread_samples(&profile, &run, 1, 4, 47, "python3");
	add_thread_samples(&profile, &run, 1, 5, 48, "1234");

	text = folded_text(&profile, &total);
	assert_string_equal(text, ".NET TP Worker;run 5\n1234;run 5\npool-1-thread;run 2\n"
				  "python3;run 4\n");
	free(text);
	text = folded_text_with(
	    &profile, &(struct fold_options){.group_by = FOLD_BY_TID, .keep_tiers = false}, &total);
	assert_string_equal(text, ".NET TP Worker-42/43;run 2\n.NET TP Worker-42/44;run 3\n"
				  "1234-42/48;run 5\npool-1-thread-1-42/45;run 1\n"
				  "pool-1-thread-12-42/46;run 1\npython3-42/47;run 4\n");
	free(text);
	text = folded_text_with(
	    &profile, &(struct fold_options){.group_by = FOLD_BY_PROCESS, .keep_tiers = false},
	    &total);
	assert_string_equal(text, "app;run 16\n");
	assert_int_equal(total, 16);
	free(text);
	profile_release(&profile);
}

/* JIT frames read Assembly!Type::Method; a method sampled at two tiers is
 * one frame unless tiers are kept; the full names stay with the stacks. */
static void test_jit_names_readable_and_tiers_merged(void **state)
{
	static const char quick[] = "instance int32 [System.Private.CoreLib] System.Version::"
				    "get_Major()[QuickJitted]";
	static const char tier1[] = "instance int32 [System.Private.CoreLib] System.Version::"
				    "get_Major()[OptimizedTier1]";
	struct profile profile;
	struct folded_profile folded;
	uint64_t total;
	char *text;

	(void)state;
	profile_init(&profile);
	uint32_t main_location =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"main"});
	uint32_t early = add_jit_location(&profile, 0x7000, quick);
	uint32_t late = add_jit_location(&profile, 0x9000, tier1);
	uint32_t stub = add_jit_location(&profile, 0xa000, "stub<1> AllocateTemporaryEntryPoints");

	add_samples(&profile, (uint32_t[]){early, main_location}, 2, 1);
	add_samples(&profile, (uint32_t[]){late, main_location}, 2, 6);
	add_samples(&profile, (uint32_t[]){stub, main_location}, 2, 2);

	text = folded_text(&profile, &total);
	assert_string_equal(text, "worker;main;System.Private.CoreLib!System.Version::get_Major 7\n"
				  "worker;main;stub<1> AllocateTemporaryEntryPoints 2\n");
	free(text);
	text = folded_text_with(
	    &profile, &(struct fold_options){.group_by = FOLD_BY_THREAD, .keep_tiers = true},
	    &total);
	assert_string_equal(text, "worker;main;System.Private.CoreLib!System.Version::get_Major "
				  "[OptimizedTier1] 6\n"
				  "worker;main;System.Private.CoreLib!System.Version::get_Major "
				  "[QuickJitted] 1\n"
				  "worker;main;stub<1> AllocateTemporaryEntryPoints 2\n");
	free(text);

	/* Both full names are kept, for the flame graph's tooltips. */
	profile_fold(&profile, NULL, &folded);
	assert_int_equal(folded.count, 3);
	assert_ptr_equal(folded.stacks[0].functions[2], folded.stacks[1].functions[2]);
	assert_string_equal(folded.stacks[0].full_names[2], tier1);
	assert_string_equal(folded.stacks[1].full_names[2], quick);
	folded_profile_release(&folded);
	profile_release(&profile);
}

/* A method's OSR code runs above the method's own frame: one call, one
 * frame, its tooltip the OSR code's name. A method calling itself stays two
 * frames. */
static void test_osr_code_is_one_frame_with_its_method(void **state)
{
	static const char tier0[] = "float64 [hotloop] Demo.Program::HotMethod(int32)[QuickJitted]";
	static const char osr[] =
	    "float64 [hotloop] Demo.Program::HotMethod(int32)[OptimizedTier1OSR]";
	struct profile profile;
	struct folded_profile folded;
	uint64_t total;
	char *text;

	(void)state;
	profile_init(&profile);
	uint32_t main_location =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"main"});
	uint32_t patchpoint = add_jit_location(&profile, 0x7000, tier0);
	uint32_t osr_code = add_jit_location(&profile, 0x9000, osr);
	uint32_t recursion = add_jit_location(&profile, 0x7010, tier0);

	add_samples(&profile, (uint32_t[]){osr_code, patchpoint, main_location}, 3, 4);
	add_samples(&profile, (uint32_t[]){recursion, patchpoint, main_location}, 3, 1);
	text = folded_text(&profile, &total);
	assert_string_equal(text, "worker;main;hotloop!Demo.Program::HotMethod 4\n"
				  "worker;main;hotloop!Demo.Program::HotMethod;"
				  "hotloop!Demo.Program::HotMethod 1\n");
	free(text);
	profile_fold(&profile, NULL, &folded);
	assert_int_equal(folded.stacks[0].depth, 3);
	assert_string_equal(folded.stacks[0].full_names[2], osr);
	folded_profile_release(&folded);
	text = folded_text_with(
	    &profile, &(struct fold_options){.group_by = FOLD_BY_THREAD, .keep_tiers = true},
	    &total);
	assert_non_null(strstr(text, "HotMethod [QuickJitted];hotloop!Demo.Program::HotMethod "
				     "[OptimizedTier1OSR] 4\n"));
	free(text);
	profile_release(&profile);
}

/* A run of unnamed frames of one module is one frame. */
static void test_unnamed_runs_are_one_frame(void **state)
{
	struct profile profile;
	uint64_t total;
	char *text;
	uint32_t stack[6];

	(void)state;
	profile_init(&profile);
	stack[5] =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", 1, (const char *[]){"main"});
	stack[4] = add_unnamed_location(&profile, 0x2000, "[libcoreclr.so]");
	stack[3] = add_unnamed_location(&profile, 0x2100, "[libcoreclr.so]");
	stack[2] = add_location(&profile, 0x2200, FRAME_NATIVE, "/lib/libcoreclr.so", 1,
				(const char *[]){"coreclr_execute_assembly"});
	stack[1] = add_unnamed_location(&profile, 0x2300, "[libcoreclr.so]");
	stack[0] = add_unnamed_location(&profile, 0x2400, "[libcoreclr.so]");
	add_samples(&profile, stack, 6, 3);

	text = folded_text(&profile, &total);
	assert_string_equal(text, "worker;main;[libcoreclr.so];coreclr_execute_assembly;"
				  "[libcoreclr.so] 3\n");
	free(text);
	profile_release(&profile);
}

/* perf_script.out's module is what perf-script readers find inside a frame
 * line's last parentheses: no " (deleted)", no other space or parenthesis. */
static void test_perf_script_modules_without_spaces(void **state)
{
	struct profile profile;
	struct resolved_location memfd = {
	    .module = "/memfd:doublemapper (deleted)", .kind = FRAME_JIT, .frame_count = 1};
	struct resolved_location replaced = {
	    .module = "/app/lib (v2).so (deleted)", .kind = FRAME_NATIVE, .frame_count = 1};
	uint32_t stack[2];
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	(void)state;
	profile_init(&profile);
	memfd.frames[0] =
	    (struct resolved_frame){.function = "[unknown]", .offset = 0, .named = false};
	replaced.frames[0] = (struct resolved_frame){.function = "run", .offset = 0, .named = true};
	stack[0] = profile_add_location(&profile, 42, 0x7000, false, &memfd);
	stack[1] = profile_add_location(&profile, 42, 0x1000, false, &replaced);
	add_samples(&profile, stack, 2, 1);
	assert_int_equal(emit_perf_script(&profile, false, out), 0);
	fclose(out);
	assert_non_null(strstr(text, "\t            7000 [unknown] (/memfd:doublemapper)\n"));
	assert_non_null(strstr(text, "\t            1000 run (/app/lib__v2_.so)\n"));
	free(text);
	profile_release(&profile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_root_first_merged_by_function_and_sorted),
	    cmocka_unit_test(test_inlined_frames_and_unsafe_characters),
	    cmocka_unit_test(test_locations_and_stacks_are_interned),
	    cmocka_unit_test(test_empty_stack_is_interned),
	    cmocka_unit_test(test_grouped_by_thread_tid_or_process),
	    cmocka_unit_test(test_jit_names_readable_and_tiers_merged),
	    cmocka_unit_test(test_osr_code_is_one_frame_with_its_method),
	    cmocka_unit_test(test_unnamed_runs_are_one_frame),
	    cmocka_unit_test(test_perf_script_modules_without_spaces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
