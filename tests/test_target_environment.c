/* Reading the environment a process started with: from real processes
 * started with a chosen environment, and from environ contents a hostile
 * target could write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sleeping_process.h"
#include "target_environment.h"

#include <string.h>

static void test_reads_a_real_process(void **state)
{
	char *environment[] = {"TMP=/not/this", "TMPDIR=/srv/run", "TMPDIR2=/nor/this", NULL};
	pid_t pid = sleeping_process_start(environment);
	char value[64];

	(void)state;
	assert_true(target_environment_value(pid, "TMPDIR", value, sizeof(value)));
	assert_string_equal(value, "/srv/run");
	assert_true(target_environment_value(pid, "TMP", value, sizeof(value)));
	assert_string_equal(value, "/not/this");
	assert_false(target_environment_value(pid, "HOME", value, sizeof(value)));
	/* does not fit: not cut short */
	assert_false(target_environment_value(pid, "TMPDIR", value, 8));
	sleeping_process_stop(pid);
}

static void test_gone_process(void **state)
{
	char *environment[] = {"TMPDIR=/srv/run", NULL};
	pid_t pid = sleeping_process_start(environment);
	char value[64];

	(void)state;
	sleeping_process_stop(pid);
	assert_false(target_environment_value(pid, "TMPDIR", value, sizeof(value)));
}

static void test_hostile_contents(void **state)
{
	static const char cut[] = "A=1\0TMPDIR=/cut/by/the/end";
	static const char odd[] = "=x\0TMPDIR\0TMPDIR=\0TMPDIR=/second\0";
	char value[64];

	(void)state;
	/* the last entry has no NUL: the reading stopped inside it */
	assert_false(target_environment_find(cut, sizeof(cut) - 1, "TMPDIR", value, sizeof(value)));
	assert_true(target_environment_find(cut, sizeof(cut) - 1, "A", value, sizeof(value)));
	assert_string_equal(value, "1");
	/* no '=' is no entry; the first one set wins, empty included */
	assert_true(target_environment_find(odd, sizeof(odd) - 1, "TMPDIR", value, sizeof(value)));
	assert_string_equal(value, "");
	assert_false(target_environment_find(odd, 0, "TMPDIR", value, sizeof(value)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reads_a_real_process),
	    cmocka_unit_test(test_gone_process),
	    cmocka_unit_test(test_hostile_contents),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
