/* prof.tar.gz and the trace zip: the tar.gz takes the members the zip
 * deflated already as they are, and real tar and unzip read both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char folder[64];

static char *path_in(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", folder, name);
	return path;
}

static char *read_file(const char *path, size_t *size)
{
	FILE *file = fopen(path, "r");
	char *bytes;
	long length;

	assert_non_null(file);
	fseek(file, 0, SEEK_END);
	length = ftell(file);
	rewind(file);
	bytes = malloc((size_t)length + 1);
	assert_int_equal(fread(bytes, 1, (size_t)length, file), (size_t)length);
	fclose(file);
	*size = (size_t)length;
	return bytes;
}

/* A perf map of 40,000 lines (1.1 MB, deflating to about a tenth), a
 * log, and a perf.data of 100,000 bytes that deflate cannot shrink. */
static int setup(void **state)
{
	FILE *map, *log, *data;

	(void)state;
	snprintf(folder, sizeof(folder), "/tmp/profcpu-test-archive.XXXXXX");
	assert_non_null(mkdtemp(folder));
	map = fopen(path_in("perf-1.map"), "w");
	assert_non_null(map);
	for (int i = 0; i < 40000; i++)
		fprintf(map, "7f00%08x 40 method_%d\n", i * 64, i % 977);
	fclose(map);
	data = fopen(path_in("perf.data"), "w");
	assert_non_null(data);
	for (uint32_t i = 0, x = 1; i < 100000; i++)
		putc((int)((x = x * 1103515245 + 12345) >> 24), data);
	fclose(data);
	log = fopen(path_in("profcpu.log"), "w");
	assert_non_null(log);
	fputs("a log\n", log);
	fclose(log);
	return 0;
}

static int teardown(void **state)
{
	char command[128];

	(void)state;
	snprintf(command, sizeof(command), "rm -rf %s", folder);
	return system(command);
}

/* The log goes into the zip under another name: the tar.gz deflates it.
 * perf.data is stored, as the trace zip stores perf.data.txt. */
static const struct archive_member zip_members[] = {
    {"perf-1.map", NULL, false},
    {"profcpu.log", "perfcollect.log", false},
    {"missing", NULL, false},
    {"perf.data", NULL, true},
};
#define ZIP_MEMBER_COUNT (sizeof(zip_members) / sizeof(*zip_members))
/* perf.data, compressed already, is stored. */
static const struct archive_member tar_members[] = {
    {"perf-1.map", NULL, false},
    {"profcpu.log", NULL, false},
    {"perf.data", NULL, true},
};

static void write_both(int *zip_status, int *tar_status)
{
	char zip_path[256];
	struct deflated_members deflated = {zip_path, "prof.trace"};

	snprintf(zip_path, sizeof(zip_path), "%s", path_in("prof.trace.zip"));
	*zip_status = emit_archive(folder, zip_members, ZIP_MEMBER_COUNT, "prof.trace", ARCHIVE_ZIP,
				   zip_path, NULL);
	*tar_status = emit_archive(folder, tar_members, 3, "capture", ARCHIVE_TAR_GZ,
				   path_in("prof.tar.gz"), &deflated);
}

/* The member both hold is deflated once: the zip's deflated bytes stand in
 * the tar.gz as they are, a member compressed already is stored, and tar
 * and unzip give back every file whole. */
static void test_tar_gz_takes_zip_members(void **state)
{
	char command[512], needle[4096], *zip, *tar_gz;
	size_t zip_size, tar_gz_size;
	int zip_status, tar_status;

	(void)state;
	write_both(&zip_status, &tar_status);
	assert_int_equal(zip_status, 0);
	assert_int_equal(tar_status, 0);
	snprintf(
	    command, sizeof(command),
	    "cd %s && mkdir out && tar -xzf prof.tar.gz -C out && "
	    "cmp perf-1.map out/capture/perf-1.map && cmp profcpu.log out/capture/profcpu.log && "
	    "unzip -q prof.trace.zip -d out && cmp perf-1.map out/prof.trace/perf-1.map && "
	    "cmp profcpu.log out/prof.trace/perfcollect.log && rm -r out",
	    folder);
	assert_int_equal(system(command), 0);
	/* 4 KiB from the middle of the zip (the perf map's deflated bytes) are
	 * in the tar.gz too. */
	zip = read_file(path_in("prof.trace.zip"), &zip_size);
	tar_gz = read_file(path_in("prof.tar.gz"), &tar_gz_size);
	assert_true(zip_size > 16384);
	memcpy(needle, zip + zip_size / 3, sizeof(needle));
	assert_non_null(memmem(tar_gz, tar_gz_size, needle, sizeof(needle)));
	free(zip);
	/* perf.data's bytes are there as they are. */
	zip = read_file(path_in("perf.data"), &zip_size);
	memcpy(needle, zip + 1000, sizeof(needle));
	assert_non_null(memmem(tar_gz, tar_gz_size, needle, sizeof(needle)));
	free(zip);
	free(tar_gz);
}

/* A file that changed after the zip was written is not put into the tar.gz
 * with the zip's old bytes: the tar.gz fails. */
/* unzip reads every member back whole, the stored one stored, with the
 * files' permissions; Python's zipfile agrees (its CRC-32s included). */
static void test_zip_members(void **state)
{
	char command[1024];
	int zip_status, tar_status;

	(void)state;
	write_both(&zip_status, &tar_status);
	assert_int_equal(zip_status, 0);
	snprintf(command, sizeof(command),
		 "cd %s && unzip -tq prof.trace.zip >/dev/null && "
		 "unzip -v prof.trace.zip | grep -qE ' Stored .* prof\\.trace/perf\\.data$' && "
		 "unzip -v prof.trace.zip | grep -qE ' Defl:.* prof\\.trace/perf-1\\.map$' && "
		 "mkdir out && unzip -q prof.trace.zip -d out && cmp perf.data "
		 "out/prof.trace/perf.data && "
		 "rm -r out && python3 -c \"import os, sys, zipfile; "
		 "z = zipfile.ZipFile('prof.trace.zip'); "
		 "mode = z.getinfo('prof.trace/perf.data').external_attr >> 16; "
		 "sys.exit(z.testzip() is not None or len(z.namelist()) != 3 or "
		 "mode != os.stat('perf.data').st_mode)\"",
		 folder);
	assert_int_equal(system(command), 0);
}

static void test_changed_file_fails(void **state)
{
	char zip_path[256];
	struct deflated_members deflated = {zip_path, "prof.trace"};
	FILE *map;

	(void)state;
	snprintf(zip_path, sizeof(zip_path), "%s", path_in("prof.trace.zip"));
	assert_int_equal(emit_archive(folder, zip_members, ZIP_MEMBER_COUNT, "prof.trace",
				      ARCHIVE_ZIP, zip_path, NULL),
			 0);
	map = fopen(path_in("perf-1.map"), "r+");
	fputs("8", map); /* same size, other bytes */
	fclose(map);
	assert_int_equal(emit_archive(folder, tar_members, 3, "capture", ARCHIVE_TAR_GZ,
				      path_in("prof.tar.gz"), &deflated),
			 -1);
	assert_int_equal(errno, EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tar_gz_takes_zip_members),
	    cmocka_unit_test(test_zip_members),
	    cmocka_unit_test(test_changed_file_fails),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
