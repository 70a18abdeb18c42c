/* Reading the environment a process started with: from real processes
 * started with a chosen environment, and from environ contents a hostile
 * target could write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "target_environment.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

/* posix_spawn returns once the child has replaced its memory, which can be
 * before the kernel has placed its new environment: wait for it. */
static void wait_for_environment(pid_t pid)
{
	char path[64], byte;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	for (;;) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		if (read(fd, &byte, 1) == 1)
			break;
		close(fd);
		usleep(1000);
	}
	close(fd);
}

/* Starts `sleep` with `environment` (NULL-ended); its pid. */
static pid_t start_with(char *const *environment)
{
	char *arguments[] = {"sleep", "30", NULL};
	pid_t pid;

	assert_int_equal(posix_spawn(&pid, "/bin/sleep", NULL, NULL, arguments, environment), 0);
	wait_for_environment(pid);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_reads_a_real_process(void **state)
{
	char *environment[] = {"TMP=/not/this", "TMPDIR=/srv/run", "TMPDIR2=/nor/this", NULL};
	pid_t pid = start_with(environment);
	char value[64];

	(void)state;
	assert_true(target_environment_value(pid, "TMPDIR", value, sizeof(value)));
	assert_string_equal(value, "/srv/run");
	assert_true(target_environment_value(pid, "TMP", value, sizeof(value)));
	assert_string_equal(value, "/not/this");
	assert_false(target_environment_value(pid, "HOME", value, sizeof(value)));
	/* does not fit: not cut short */
	assert_false(target_environment_value(pid, "TMPDIR", value, 8));
	stop(pid);
}

static void test_gone_process(void **state)
{
	char *environment[] = {"TMPDIR=/srv/run", NULL};
	pid_t pid = start_with(environment);
	char value[64];

	(void)state;
	stop(pid);
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
