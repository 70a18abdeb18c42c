/* The manifest of a .NET single-file app: manifests as the .NET 6+ and
 * .NET 5 bundlers lay them out, and the damaged ones a hostile executable
 * could hold. The real bundles are read by tests/collect_dotnet_single_file.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bundle_manifest.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct writer {
	uint8_t bytes[4096];
	size_t length;
};

static void put(struct writer *out, uint64_t value, size_t size)
{
	for (size_t i = 0; i < size; i++)
		out->bytes[out->length++] = (uint8_t)(value >> (8 * i));
}

static void put_string(struct writer *out, const char *text)
{
	size_t length = strlen(text);

	if (length >= 0x80) {
		put(out, 0x80 | (length & 0x7f), 1);
		put(out, length >> 7, 1);
	} else {
		put(out, length, 1);
	}
	memcpy(out->bytes + out->length, text, length);
	out->length += length;
}

static void put_header(struct writer *out, uint32_t major, int32_t count)
{
	put(out, major, 4);
	put(out, 0, 4);
	put(out, (uint32_t)count, 4);
	put_string(out, "QzEmIc3Wl8EO");
	for (int i = 0; i < 5; i++) /* deps.json, runtimeconfig.json, flags */
		put(out, 0, 8);
}

static void put_entry(struct writer *out, uint32_t major, uint64_t offset, uint64_t size,
		      uint64_t compressed, uint8_t type, const char *path)
{
	put(out, offset, 8);
	put(out, size, 8);
	if (major >= 6)
		put(out, compressed, 8);
	put(out, type, 1);
	put_string(out, path);
}

static void test_net6_manifest(void **state)
{
	struct writer out = {0};
	struct bundle_manifest manifest;
	char long_path[200];

	(void)state;
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	put_header(&out, 6, 4);
	put_entry(&out, 6, 11937792, 5120, 0, 1, "r2rloop.dll");
	put_entry(&out, 6, 11942912, 465, 0, 4, "r2rloop.runtimeconfig.json");
	put_entry(&out, 6, 36065664, 15576872, 0, 1, "System.Private.CoreLib.dll");
	put_entry(&out, 6, 60000000, 100000, 40000, 1, long_path); /* compressed */
	assert_true(bundle_manifest_parse(out.bytes, out.length, 73594420, &manifest));
	assert_int_equal(manifest.major_version, 6);
	assert_int_equal(manifest.count, 4);
	assert_string_equal(manifest.entries[3].path, long_path);
	assert_ptr_equal(bundle_manifest_assembly_at(&manifest, 36065664 + 1000),
			 &manifest.entries[2]);
	assert_null(bundle_manifest_assembly_at(&manifest, 11942912)); /* not an assembly */
	assert_null(bundle_manifest_assembly_at(&manifest, 60000000)); /* compressed */
	assert_null(bundle_manifest_assembly_at(&manifest, 36065664 + 15576872));
	assert_ptr_equal(bundle_manifest_find(&manifest, "r2rloop.dll"), &manifest.entries[0]);
	assert_null(bundle_manifest_find(&manifest, "missing.dll"));
	bundle_manifest_free(&manifest);
}

static void test_net5_manifest(void **state)
{
	struct writer out = {0};
	struct bundle_manifest manifest;

	(void)state;
	put_header(&out, 2, 1);
	put_entry(&out, 2, 4096, 8192, 0, 1, "app.dll");
	assert_true(bundle_manifest_parse(out.bytes, out.length, 1 << 20, &manifest));
	assert_int_equal(manifest.entries[0].compressed_size, 0);
	assert_ptr_equal(bundle_manifest_assembly_at(&manifest, 5000), &manifest.entries[0]);
	bundle_manifest_free(&manifest);
}

/* Each damage alone, on an otherwise good .NET 6 manifest of one file. */
static bool parses(uint32_t major, int32_t count, uint64_t offset, uint64_t size, const char *path,
		   size_t cut)
{
	struct writer out = {0};
	struct bundle_manifest manifest;
	bool parsed;

	put_header(&out, major, count);
	put_entry(&out, major, offset, size, 0, 1, path);
	parsed = bundle_manifest_parse(out.bytes, out.length - cut, 1 << 20, &manifest);
	bundle_manifest_free(&manifest);
	return parsed;
}

static void test_damaged_manifests(void **state)
{
	(void)state;
	assert_true(parses(6, 1, 4096, 100, "a.dll", 0));
	assert_false(parses(6, 1, 4096, 100, "a.dll", 1));  /* cut short */
	assert_false(parses(7, 1, 4096, 100, "a.dll", 0));  /* a version to come */
	assert_false(parses(1, 1, 4096, 100, "a.dll", 0));  /* .NET Core 3 */
	assert_false(parses(6, 2, 4096, 100, "a.dll", 0));  /* more files than written */
	assert_false(parses(6, -1, 4096, 100, "a.dll", 0)); /* a negative count */
	assert_false(parses(6, 1 << 30, 4096, 100, "a.dll", 0));
	assert_false(parses(6, 1, 0, 100, "a.dll", 0));		  /* offset 0 */
	assert_false(parses(6, 1, 1 << 20, 1, "a.dll", 0));	  /* past the file's end */
	assert_false(parses(6, 1, 4096, UINT64_MAX, "a.dll", 0)); /* a negative size */
	assert_false(parses(6, 1, UINT64_MAX - 10, 100, "a.dll", 0));
	assert_false(parses(6, 1, 4096, 100, "", 0)); /* an empty path */
}

static void test_not_a_bundle(void **state)
{
	struct bundle_manifest manifest;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_false(bundle_manifest_read(fd, &manifest));
	assert_int_equal(manifest.count, 0);
	close(fd);
}

/* A file holding, at offset 100, `original` deflated as the bundler
 * stores a compressed file (raw deflate); the stream's length in
 * `compressed`. */
static int compressed_file(const uint8_t *original, size_t size, uint64_t *compressed)
{
	static uint8_t deflated[1 << 16];
	char path[] = "/tmp/profcpu-bundle-XXXXXX";
	z_stream stream = {.next_in = (uint8_t *)original,
			   .avail_in = (uInt)size,
			   .next_out = deflated,
			   .avail_out = sizeof(deflated)};
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(deflateInit2(&stream, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
			 Z_OK);
	assert_int_equal(deflate(&stream, Z_FINISH), Z_STREAM_END);
	*compressed = stream.total_out;
	deflateEnd(&stream);
	assert_int_equal(pwrite(fd, deflated, *compressed, 100), (ssize_t)*compressed);
	return fd;
}

/* A compressed file is inflated, whole or its first bytes; a stream that
 * ends short of the size the manifest gives, or damaged, is no file. */
static void test_compressed_entry(void **state)
{
	static uint8_t original[20000];
	struct bundle_entry entry = {.offset = 100, .size = sizeof(original), .type = 1};
	uint8_t *bytes;
	size_t size;
	int fd;

	(void)state;
	for (size_t i = 0; i < sizeof(original); i++)
		original[i] = (uint8_t)(i * 7 / 13);
	fd = compressed_file(original, sizeof(original), &entry.compressed_size);
	assert_non_null(bytes = bundle_entry_read(fd, &entry, UINT64_MAX, &size));
	assert_int_equal(size, sizeof(original));
	assert_memory_equal(bytes, original, sizeof(original));
	free(bytes);
	assert_non_null(bytes = bundle_entry_read(fd, &entry, 4096, &size));
	assert_int_equal(size, 4096);
	assert_memory_equal(bytes, original, 4096);
	free(bytes);
	entry.size = sizeof(original) + 1; /* more than the stream holds */
	assert_null(bundle_entry_read(fd, &entry, UINT64_MAX, &size));
	entry.size = sizeof(original);
	entry.compressed_size /= 2; /* cut short */
	assert_null(bundle_entry_read(fd, &entry, UINT64_MAX, &size));
	assert_int_equal(pwrite(fd, "\xff\xff\xff\xff", 4, 100), 4); /* damaged */
	entry.compressed_size *= 2;
	assert_null(bundle_entry_read(fd, &entry, UINT64_MAX, &size));
	close(fd);
}

/* A bomb: 32 MiB of zeros deflated to some 32 KiB, a thousand times its
 * compressed bytes, is not inflated, not even its first page; a file that
 * claims 16 times its compressed bytes is. */
static void test_bomb_entry_not_inflated(void **state)
{
	static uint8_t zeros[32 << 20];
	struct bundle_entry entry = {.offset = 100, .size = sizeof(zeros), .type = 1};
	uint8_t *bytes;
	size_t size;
	int fd;

	(void)state;
	fd = compressed_file(zeros, sizeof(zeros), &entry.compressed_size);
	assert_null(bundle_entry_read(fd, &entry, UINT64_MAX, &size));
	assert_null(bundle_entry_read(fd, &entry, 4096, &size));
	entry.size = 16 * entry.compressed_size;
	assert_non_null(bytes = bundle_entry_read(fd, &entry, UINT64_MAX, &size));
	assert_int_equal(size, entry.size);
	free(bytes);
	close(fd);
}

/* The bytes this process has read from files so far (/proc/self/io). */
static uint64_t bytes_read(void)
{
	char text[1024];
	int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
	ssize_t got = read(fd, text, sizeof(text) - 1);

	close(fd);
	assert_true(got > 0);
	text[got] = '\0';
	assert_non_null(strstr(text, "rchar: "));
	return strtoull(strstr(text, "rchar: ") + 7, NULL, 10);
}

/* A crafted stream of empty stored blocks (5 bytes each) inflates to
 * nothing: reading 4 KiB of it stops after twice that and 4 KiB, not at
 * the end of its 8 MiB (65,536 such entries in one bundle were 512 GiB to
 * read). Incompressible bytes, which the compressor stores, still give
 * their first 4 KiB. */
static void test_inflating_reads_a_bounded_input(void **state)
{
	static uint8_t blocks[8 << 20], original[20000];
	struct bundle_entry entry = {.offset = 100, .size = 1 << 20, .type = 1};
	char path[] = "/tmp/profcpu-bundle-XXXXXX";
	uint64_t before;
	uint8_t *bytes;
	size_t size;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	for (size_t i = 0; i + 5 <= sizeof(blocks); i += 5)
		memcpy(blocks + i, "\0\0\0\xff\xff", 5);
	assert_int_equal(pwrite(fd, blocks, sizeof(blocks), 100), (ssize_t)sizeof(blocks));
	entry.compressed_size = sizeof(blocks);
	before = bytes_read();
	assert_null(bundle_entry_read(fd, &entry, 4096, &size));
	assert_in_range(bytes_read() - before, 1, 2 * 4096 + 4096 + 1024);
	close(fd);

	srand(47);
	for (size_t i = 0; i < sizeof(original); i++)
		original[i] = (uint8_t)rand();
	fd = compressed_file(original, sizeof(original), &entry.compressed_size);
	entry.size = sizeof(original);
	assert_non_null(bytes = bundle_entry_read(fd, &entry, 4096, &size));
	assert_memory_equal(bytes, original, 4096);
	free(bytes);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_net6_manifest),
	    cmocka_unit_test(test_net5_manifest),
	    cmocka_unit_test(test_damaged_manifests),
	    cmocka_unit_test(test_not_a_bundle),
	    cmocka_unit_test(test_compressed_entry),
	    cmocka_unit_test(test_inflating_reads_a_bounded_input),
	    cmocka_unit_test(test_bomb_entry_not_inflated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
