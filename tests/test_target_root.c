/* Opening the target's files inside its root: with openat2 and with the
 * component-by-component walk used on kernels without it. A fake root holds
 * symlinks that would escape it if resolved against our own root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "target_root.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	char base[64];
	int root_fd;
};

static void write_file(const char *path, const char *text)
{
	FILE *out = fopen(path, "w");

	assert_non_null(out);
	fputs(text, out);
	fclose(out);
}

/* base/outside/secret: "outside"; base/root/<base>/outside/secret: "inside";
 * in the root, /app/absolute -> <base>/outside/secret,
 * /app/dotdot -> ../../../../..<base>/outside/secret, /app/dir -> /lib,
 * /app/loop -> /app/loop. */
static int set_up(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));
	char path[PATH_MAX], target[PATH_MAX];

	strcpy(fixture->base, "/tmp/profcpu-root-XXXXXX");
	assert_non_null(mkdtemp(fixture->base));
	snprintf(path, sizeof(path), "%s/outside", fixture->base);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/outside/secret", fixture->base);
	write_file(path, "outside");
	snprintf(path, sizeof(path), "mkdir -p %s/root%s/outside %s/root/app %s/root/lib",
		 fixture->base, fixture->base, fixture->base, fixture->base);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/root%s/outside/secret", fixture->base, fixture->base);
	write_file(path, "inside");
	snprintf(path, sizeof(path), "%s/root/lib/libx.so", fixture->base);
	write_file(path, "libx");
	snprintf(target, sizeof(target), "%s/outside/secret", fixture->base);
	snprintf(path, sizeof(path), "%s/root/app/absolute", fixture->base);
	assert_int_equal(symlink(target, path), 0);
	snprintf(target, sizeof(target), "../../../../..%s/outside/secret", fixture->base);
	snprintf(path, sizeof(path), "%s/root/app/dotdot", fixture->base);
	assert_int_equal(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/root/app/dir", fixture->base);
	assert_int_equal(symlink("/lib", path), 0);
	snprintf(path, sizeof(path), "%s/root/app/loop", fixture->base);
	assert_int_equal(symlink("/app/loop", path), 0);
	snprintf(path, sizeof(path), "%s/root", fixture->base);
	fixture->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fixture->root_fd >= 0);
	*state = fixture;
	return 0;
}

static int tear_down(void **state)
{
	struct fixture *fixture = *state;
	char command[128];

	close(fixture->root_fd);
	snprintf(command, sizeof(command), "rm -rf %s", fixture->base);
	assert_int_equal(system(command), 0);
	free(fixture);
	return 0;
}

typedef int (*opener)(int root_fd, const char *path, int flags);

static void read_through(opener open_in_root, int root_fd, const char *path, const char *expected)
{
	char text[32] = "";
	int fd = open_in_root(root_fd, path, O_RDONLY);

	assert_true(fd >= 0);
	assert_true(read(fd, text, sizeof(text) - 1) > 0);
	assert_string_equal(text, expected);
	close(fd);
}

static void check_stays_inside(opener open_in_root, struct fixture *fixture)
{
	char path[PATH_MAX];

	read_through(open_in_root, fixture->root_fd, "/app/absolute", "inside");
	read_through(open_in_root, fixture->root_fd, "/app/dotdot", "inside");
	snprintf(path, sizeof(path), "/../../..%s/outside/secret", fixture->base);
	read_through(open_in_root, fixture->root_fd, path, "inside");
	read_through(open_in_root, fixture->root_fd, "/app/dir/libx.so", "libx");
	read_through(open_in_root, fixture->root_fd, "app/../lib/./libx.so", "libx");
	assert_int_equal(open_in_root(fixture->root_fd, "/app/loop", O_RDONLY), -1);
	assert_int_equal(open_in_root(fixture->root_fd, "/app/missing", O_RDONLY), -1);
	assert_int_equal(open_in_root(fixture->root_fd, "/lib/libx.so/deeper", O_RDONLY), -1);
}

static void test_openat2_stays_inside_the_root(void **state)
{
	check_stays_inside(target_root_openat, *state);
}

static void test_walk_stays_inside_the_root(void **state)
{
	check_stays_inside(target_root_openat_by_walk, *state);
}

static void test_without_root_uses_own_file_system(void **state)
{
	struct fixture *fixture = *state;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/outside/secret", fixture->base);
	read_through(target_root_openat, -1, path, "outside");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_openat2_stays_inside_the_root, set_up, tear_down),
	    cmocka_unit_test_setup_teardown(test_walk_stays_inside_the_root, set_up, tear_down),
	    cmocka_unit_test_setup_teardown(test_without_root_uses_own_file_system, set_up,
					    tear_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
