/* Where a .NET runtime puts its perf map and its diagnostics socket, read
 * from real processes started with the environment a user would give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime_directories.h"

#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/wait.h>

struct directories {
	char perfmap[PATH_MAX], socket[PATH_MAX];
};

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

/* The directories of a process started with `environment` (NULL-ended). */
static struct directories directories_of(char *const *environment)
{
	char *arguments[] = {"sleep", "30", NULL};
	struct directories found;
	pid_t pid;

	assert_int_equal(posix_spawn(&pid, "/bin/sleep", NULL, NULL, arguments, environment), 0);
	wait_for_environment(pid);
	runtime_perfmap_directory(pid, found.perfmap, sizeof(found.perfmap));
	runtime_socket_directory(pid, found.socket, sizeof(found.socket));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return found;
}

static void test_defaults_to_tmp(void **state)
{
	char *environment[] = {"PATH=/usr/bin", NULL};
	struct directories found = directories_of(environment);

	(void)state;
	assert_string_equal(found.perfmap, "/tmp");
	assert_string_equal(found.socket, "/tmp");
}

static void test_follows_the_settings(void **state)
{
	char *environment[] = {"TMPDIR=/run/app/", "COMPlus_PerfMapJitDumpPath=/old",
			       "DOTNET_PerfMapJitDumpPath=/var/maps", NULL};
	char *legacy[] = {"COMPlus_PerfMapJitDumpPath=/old", "TMPDIR=/", NULL};
	struct directories found = directories_of(environment);

	(void)state;
	assert_string_equal(found.perfmap, "/var/maps"); /* DOTNET_ first */
	assert_string_equal(found.socket, "/run/app");
	found = directories_of(legacy);
	assert_string_equal(found.perfmap, "/old");
	assert_string_equal(found.socket, ""); /* the root: files at "/NAME" */
}

static void test_relative_or_empty_gives_tmp(void **state)
{
	char *environment[] = {"TMPDIR=", "DOTNET_PerfMapJitDumpPath=maps", NULL};
	struct directories found = directories_of(environment);

	(void)state;
	assert_string_equal(found.perfmap, "/tmp");
	assert_string_equal(found.socket, "/tmp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_to_tmp),
	    cmocka_unit_test(test_follows_the_settings),
	    cmocka_unit_test(test_relative_or_empty_gives_tmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
