/* Opening and reading a target's file: only regular files are opened for
 * reading, and a read stops at its budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct folder {
	char path[64];
	int fd;
};

static void make_folder(struct folder *folder)
{
	snprintf(folder->path, sizeof(folder->path), "/tmp/profcpu-target-file-XXXXXX");
	assert_non_null(mkdtemp(folder->path));
	folder->fd = open(folder->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(folder->fd >= 0);
}

static void remove_folder(struct folder *folder, const char *const *names)
{
	for (; *names; names++)
		unlinkat(folder->fd, *names, 0);
	close(folder->fd);
	rmdir(folder->path);
}

/* A FIFO would block an open for reading until someone writes, a device
 * never ends: they are refused without being opened, also behind a link. */
static void test_fifo_and_device_are_refused(void **state)
{
	static const char *const names[] = {"fifo", "link", NULL};
	struct folder root;

	(void)state;
	make_folder(&root);
	assert_int_equal(mkfifoat(root.fd, "fifo", 0600), 0);
	assert_int_equal(symlinkat("/fifo", root.fd, "link"), 0);
	assert_int_equal(target_file_open(root.fd, "/fifo", 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(target_file_open(root.fd, "/link", 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(target_file_open(-1, "/dev/zero", 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(target_file_open(root.fd, "/missing", 0), -1);
	assert_int_equal(errno, ENOENT);
	remove_folder(&root, names);
}

static void count_bytes(const char *bytes, size_t length, void *context)
{
	(void)bytes;
	*(size_t *)context += length;
}

/* A file bigger than the budget is read up to it, and the budget says so. */
static void test_read_stops_at_the_byte_budget(void **state)
{
	static const char *const names[] = {"big", NULL};
	struct target_file_budget budget = {.max_bytes = 100000, .max_seconds = 60};
	struct folder root;
	char text[200000], words[96];
	size_t read = 0;
	int fd, writer;

	(void)state;
	make_folder(&root);
	writer = openat(root.fd, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	memset(text, 'x', sizeof(text));
	assert_int_equal(write(writer, text, sizeof(text)), (ssize_t)sizeof(text));
	close(writer);
	fd = target_file_open(root.fd, "/big", 0);
	assert_true(fd >= 0);
	assert_int_equal(target_file_read(fd, &budget, count_bytes, &read), 0);
	assert_int_equal(read, 100000);
	assert_string_equal(budget.stopped_by, "the size limit");
	assert_string_equal(target_file_describe_budget(&budget, words, sizeof(words)),
			    "stopped reading after 0.1 MiB: the size limit");
	close(fd);
	remove_folder(&root, names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fifo_and_device_are_refused),
	    cmocka_unit_test(test_read_stops_at_the_byte_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
