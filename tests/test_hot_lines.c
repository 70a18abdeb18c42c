/* The hottest source lines of a profile (hot_lines.txt, profcpu lines):
 * functions named as the folded stacks name them, each with its lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "emit.h"
#include "profile.h"

#include <stdlib.h>
#include <string.h>

/* A location of one frame named `function`, at `file`:`line`. */
static uint32_t add_location(struct profile *profile, uint64_t address, enum frame_kind kind,
			     const char *module, const char *function, const char *file,
			     uint32_t line)
{
	struct resolved_location resolved = {.module = module, .kind = kind, .frame_count = 1};

	resolved.frames[0] = (struct resolved_frame){
	    .function = function, .named = true, .line = {.file = file, .number = line}};
	return profile_add_location(profile, 42, address, kind == FRAME_KERNEL, &resolved);
}

static void add_samples(struct profile *profile, uint32_t leaf, uint32_t caller, int count)
{
	struct profile_sample sample = {
	    .pid = 42,
	    .tid = 42,
	    .stack = profile_intern_stack(profile, (uint32_t[]){leaf, caller}, 2),
	    .process_name = string_table_intern(profile->strings, "app"),
	    .thread_name = string_table_intern(profile->strings, "worker"),
	};

	while (count-- > 0)
		profile_add_sample(profile, &sample);
}

static char *hot_lines_text(const struct profile *profile)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	assert_int_equal(emit_hot_lines(profile, HOT_LINES_FUNCTIONS, NULL, out), 0);
	fclose(out);
	return text;
}

/* A JIT method sampled at two tiers is one function, named as in the
 * folded stacks ("Assembly!Type::Method"), with both tiers' samples on
 * its lines; a native function keeps its name. */
static void test_functions_named_as_folded_stacks_name_them(void **state)
{
	struct profile profile;
	char *text;

	(void)state;
	profile_init(&profile);
	uint32_t main_location =
	    add_location(&profile, 0x1000, FRAME_NATIVE, "/bin/app", "main", "/src/main.c", 3);
	uint32_t quick = add_location(&profile, 0x7f0000001000, FRAME_JIT, "/tmp/perf-42.map",
				      "void [HotLines] Program::Work(int32)[QuickJitted]",
				      "/src/Program.cs", 10);
	uint32_t optimized = add_location(&profile, 0x7f0000002000, FRAME_JIT, "/tmp/perf-42.map",
					  "void [HotLines] Program::Work(int32)[OptimizedTier1]",
					  "/src/Program.cs", 11);
	uint32_t native =
	    add_location(&profile, 0x2000, FRAME_NATIVE, "/bin/app", "spin", "/src/spin.c", 7);

	add_samples(&profile, quick, main_location, 2);
	add_samples(&profile, optimized, main_location, 5);
	add_samples(&profile, native, main_location, 3);
	text = hot_lines_text(&profile);
	assert_string_equal(text, "10 samples, 10 (100.0%) in code whose source line is known\n"
				  "\n"
				  " 70.00% HotLines!Program::Work  /src/Program.cs\n"
				  " Percent |  Line | Source\n"
				  "---------+-------+-------\n"
				  "   20.00 |    10 | \n"
				  "   50.00 |    11 | \n"
				  "\n"
				  " 30.00% spin  /src/spin.c\n"
				  " Percent |  Line | Source\n"
				  "---------+-------+-------\n"
				  "   30.00 |     7 | \n");
	free(text);
	profile_release(&profile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_functions_named_as_folded_stacks_name_them),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
