/* Where a .NET runtime puts its perf map and its diagnostics socket, read
 * from real processes started with the environment a user would give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime_directories.h"
#include "sleeping_process.h"

#include <limits.h>

struct directories {
	char perfmap[PATH_MAX], socket[PATH_MAX];
};

/* The directories of a process started with `environment` (NULL-ended). */
static struct directories directories_of(char *const *environment)
{
	struct directories found;
	pid_t pid = sleeping_process_start(environment);

	runtime_perfmap_directory(pid, found.perfmap, sizeof(found.perfmap));
	runtime_socket_directory(pid, found.socket, sizeof(found.socket));
	sleeping_process_stop(pid);
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
