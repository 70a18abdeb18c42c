/* Naming precompiled (ReadyToRun) .NET methods from the images themselves,
 * on the framework assemblies of the .NET SDK installed on this machine:
 * known methods are found at their code's offsets with the names the
 * runtime gives them in its jitdump, and damaged copies are refused or give
 * no names, never a crash. Skipped where the SDK is not installed. The
 * arm64 CoreLib of .NET's arm64 runtime pack (from NuGet) is named alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arm64_runtime_pack.h"
#include "whole_file.h"
#include "clr_metadata.h"
#include "managed_image.h"
#include "managed_images.h"
#include "pe_image.h"
#include "readytorun.h"

#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char framework_dir[4096];

static bool find_framework(void)
{
	glob_t found;
	bool ok =
	    glob("/usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll", 0,
		 NULL, &found) == 0;

	if (ok) {
		const char *path = found.gl_pathv[found.gl_pathc - 1];

		snprintf(framework_dir, sizeof(framework_dir), "%.*s",
			 (int)(strrchr(path, '/') - path), path);
	}
	globfree(&found);
	return ok;
}

static char *framework_file(const char *name)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/%s", framework_dir, name);
	return path;
}

/* Every precompiled code block of the file, named as the resolver names a
 * frame there; true when one of them is `expected`, at offset 0 from its
 * method's start. */
static bool some_code_is_named(const char *path, const char *expected)
{
	size_t size;
	uint8_t *data = read_whole(path, &size);
	struct managed_image *image = managed_image_open(-1, path, true);
	struct pe_image pe;
	struct readytorun r2r;
	struct readytorun_runtime_function function;
	bool found = false;

	assert_non_null(image);
	assert_true(pe_image_parse(&pe, data, size, NULL));
	assert_true(readytorun_parse(&r2r, &pe));
	for (uint32_t i = 0; !found && readytorun_runtime_function(&r2r, i, &function); i++) {
		const uint8_t *code = pe_image_at_rva(&pe, function.begin_rva, 1);
		const char *name;
		uint64_t offset;

		assert_non_null(code);
		if (managed_image_lookup(image, (uint64_t)(code - data), &name, &offset))
			found = offset == 0 && !strcmp(name, expected);
	}
	managed_image_free(image);
	free(data);
	return found;
}

static void test_framework_methods_have_the_runtime_names(void **state)
{
	(void)state;
	if (!find_framework())
		skip();
	/* A MethodDef entry point, a nested type, generic instantiations
	 * over a value type and over shared (canonical) reference types, a
	 * type and a by-ref from other places: names as the runtime's
	 * jitdump gives them (checked on .NET 10 with R2RLoop). */
	assert_true(some_code_is_named(
	    framework_file("System.Private.CoreLib.dll"),
	    "bool [System.Private.CoreLib] System.String::Equals(string,string)[PreJIT]"));
	assert_true(some_code_is_named(
	    framework_file("System.Private.CoreLib.dll"),
	    "instance int32 [System.Private.CoreLib] "
	    "System.Collections.Generic.NonRandomizedStringEqualityComparer+OrdinalComparer::"
	    "GetHashCode(string)[PreJIT]"));
	assert_true(
	    some_code_is_named(framework_file("System.Private.CoreLib.dll"),
			       "int32 [System.Private.CoreLib] "
			       "System.Collections.Generic.GenericArraySortHelper`1[System.Int32]::"
			       "PickPivotAndPartition(valuetype System.Span`1<!0>)[PreJIT]"));
	assert_true(some_code_is_named(
	    framework_file("System.Private.CoreLib.dll"),
	    "instance !1& [System.Private.CoreLib] "
	    "System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::"
	    "FindValue(!0)[PreJIT]"));
	assert_true(
	    some_code_is_named(framework_file("System.Console.dll"),
			       "class [System.Runtime]System.IO.TextWriter [System.Console] "
			       "System.Console::<get_Out>g__EnsureInitialized|26_0()[PreJIT]"));
}

/* How many of the image's code blocks are named at their start, of
 * `count`; each block ends after it starts and before the next starts. */
static size_t named_code_blocks(const char *path, size_t *count)
{
	size_t size, named = 0;
	uint8_t *data = read_whole(path, &size);
	struct managed_image *image = managed_image_open(-1, path, true);
	struct pe_image pe;
	struct readytorun r2r;
	struct readytorun_runtime_function function, next;

	assert_non_null(image);
	assert_true(pe_image_parse(&pe, data, size, NULL));
	assert_true(readytorun_parse(&r2r, &pe));
	*count = r2r.runtime_function_count;
	for (uint32_t i = 0; readytorun_runtime_function(&r2r, i, &function); i++) {
		const uint8_t *code = pe_image_at_rva(&pe, function.begin_rva, 1);
		const char *name;
		uint64_t offset;

		assert_non_null(code);
		assert_true(function.end_rva > function.begin_rva);
		if (readytorun_runtime_function(&r2r, i + 1, &next))
			assert_true(function.end_rva <= next.begin_rva);
		named += managed_image_lookup(image, (uint64_t)(code - data), &name, &offset) &&
			 offset == 0;
	}
	managed_image_free(image);
	free(data);
	return named;
}

/* The arm64 CoreLib (8-byte RUNTIME_FUNCTIONs, the end from each .xdata's
 * function length) names its code as this machine's CoreLib (x64) does,
 * the same methods by the same names. */
static void test_arm64_framework_is_named_alike(void **state)
{
	char pack[4096], corelib[4200];
	size_t arm64_count, x64_count, arm64_named, x64_named;

	(void)state;
	if (!find_framework() || !find_arm64_runtime_pack(pack, sizeof(pack)))
		skip();
	snprintf(corelib, sizeof(corelib), "%s/lib/net10.0/System.Private.CoreLib.dll", pack);
	arm64_named = named_code_blocks(corelib, &arm64_count);
	x64_named = named_code_blocks(framework_file("System.Private.CoreLib.dll"), &x64_count);
	printf("named code blocks: arm64 %zu of %zu, x64 %zu of %zu\n", arm64_named, arm64_count,
	       x64_named, x64_count);
	assert_true(arm64_count > 10000);
	assert_true(arm64_named * x64_count >= x64_named * arm64_count * 99 / 100);
	assert_true(some_code_is_named(
	    corelib, "bool [System.Private.CoreLib] System.String::Equals(string,string)[PreJIT]"));
	assert_true(some_code_is_named(
	    corelib, "instance !1& [System.Private.CoreLib] "
		     "System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::"
		     "FindValue(!0)[PreJIT]"));
}

static void test_offsets_inside_a_method_name_it(void **state)
{
	struct managed_images *images = managed_images_new(-1);
	const char *path, *name, *again;
	uint64_t offset, file_offset = 0;
	struct windows_unwind_code_at unwind;
	struct managed_image *image;

	(void)state;
	if (!find_framework())
		skip();
	path = framework_file("System.Private.CoreLib.dll");
	image = managed_images_get(images, path);
	assert_non_null(image);
	assert_true(managed_image_has_native_code(image));
	assert_string_equal(managed_image_assembly_name(image), "System.Private.CoreLib");
	/* The first byte of the image's code that names a method, then a
	 * byte further into the same code block. */
	while (!managed_images_lookup(images, path, file_offset, &name, &offset))
		file_offset += 16;
	assert_true(managed_image_unwind_at(image, file_offset, &unwind));
	assert_int_equal(unwind.offset, 0);
#if defined(__aarch64__)
	assert_int_equal(unwind.info[2] >> 2 & 3, 0); /* .xdata version 0 */
#else
	assert_int_equal(unwind.info[0] & 7, 1); /* UNWIND_INFO version 1 */
#endif
	assert_non_null(unwind.code);
	assert_true(unwind.code_size > 1);
	assert_true(managed_images_lookup(images, path, file_offset + 1, &again, &offset));
	assert_string_equal(again, name);
	assert_int_equal(offset, 1);
	/* The same file at another path is the same image. */
	assert_ptr_equal(managed_images_get(images, path), image);
	managed_images_free(images);
}

/* An image read as lookups need it names every method as one read at once,
 * gives the same unwind info, and the code from the file (one read at once
 * keeps no code). */
static void test_read_as_needed_or_at_once_alike(void **state)
{
	const char *path;
	size_t size, compared = 0;
	uint8_t *data;
	struct managed_image *lazy, *eager;
	struct pe_image pe;
	struct readytorun r2r;
	struct readytorun_runtime_function function;

	(void)state;
	if (!find_framework())
		skip();
	path = framework_file("System.Private.CoreLib.dll");
	data = read_whole(path, &size);
	lazy = managed_image_open(-1, path, true);
	eager = managed_image_open(-1, path, false);
	assert_non_null(lazy);
	assert_non_null(eager);
	assert_true(pe_image_parse(&pe, data, size, NULL));
	assert_true(readytorun_parse(&r2r, &pe));
	for (uint32_t i = 0; readytorun_runtime_function(&r2r, i, &function); i += 7) {
		uint64_t file_offset =
		    (uint64_t)(pe_image_at_rva(&pe, function.begin_rva, 1) - data);
		struct windows_unwind_code_at by_lazy, by_eager;
		const char *lazy_name, *eager_name;
		uint64_t lazy_offset, eager_offset;
		bool named = managed_image_lookup(lazy, file_offset, &lazy_name, &lazy_offset);

		assert_int_equal(
		    named, managed_image_lookup(eager, file_offset, &eager_name, &eager_offset));
		if (named) {
			assert_string_equal(lazy_name, eager_name);
			assert_int_equal(lazy_offset, eager_offset);
		}
		assert_true(managed_image_unwind_at(lazy, file_offset, &by_lazy));
		assert_true(managed_image_unwind_at(eager, file_offset, &by_eager));
		assert_int_equal(by_lazy.info_size, by_eager.info_size);
		assert_memory_equal(by_lazy.info, by_eager.info, by_lazy.info_size);
		assert_int_equal(by_lazy.code_size, by_eager.code_size);
		assert_memory_equal(by_lazy.code, data + file_offset, by_lazy.code_size);
		compared++;
	}
	assert_true(compared > 1000);
	managed_image_free(lazy);
	managed_image_free(eager);
	free(data);
}

/* Looks up an address every 64 bytes of the file: whatever the image
 * holds, this must neither crash nor read outside it (ASan watches). */
static size_t names_in(uint8_t *data, size_t size)
{
	struct managed_image *image = managed_image_from_bytes(data, size);
	size_t named = 0;
	const char *name;
	uint64_t offset;

	if (!image)
		return 0;
	for (uint64_t file_offset = 0; file_offset < size; file_offset += 64)
		named += managed_image_lookup(image, file_offset, &name, &offset);
	managed_image_free(image);
	return named;
}

static void test_damaged_images_are_refused_cleanly(void **state)
{
	size_t size;
	uint8_t *original;

	(void)state;
	if (!find_framework())
		skip();
	original = read_whole(framework_file("System.Console.dll"), &size);
	assert_true(names_in(memcpy(malloc(size), original, size), size) > 100);
	/* Cut short: the headers promise sections the file no longer has. */
	for (size_t cut = 0; cut < 4; cut++) {
		size_t length = size * cut / 4 + 37;

		names_in(memcpy(malloc(length), original, length), length);
	}
	/* Bytes overwritten all over the file, headers and tables included. */
	srand(18);
	for (int round = 0; round < 40; round++) {
		uint8_t *copy = memcpy(malloc(size), original, size);

		for (int i = 0; i < 200; i++)
			copy[(size_t)rand() % (round % 2 ? 4096 : size)] = (uint8_t)rand();
		names_in(copy, size);
	}
	assert_null(managed_image_from_bytes(memcpy(malloc(64), original, 64), 64));
	free(original);
}

static void test_files_that_are_not_assemblies_are_refused(void **state)
{
	char fifo[64] = "/tmp/profcpu-r2r-XXXXXX";

	(void)state;
	assert_null(managed_image_open(-1, "/bin/sh", true));
	assert_null(managed_image_open(-1, "/nonexistent/App.dll", true));
	/* A FIFO is refused without blocking on it. */
	assert_non_null(mkdtemp(fifo));
	strcat(fifo, "/App.dll");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(managed_image_open(-1, fifo, true));
	unlink(fifo);
	*strrchr(fifo, '/') = '\0';
	rmdir(fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_framework_methods_have_the_runtime_names),
	    cmocka_unit_test(test_arm64_framework_is_named_alike),
	    cmocka_unit_test(test_offsets_inside_a_method_name_it),
	    cmocka_unit_test(test_read_as_needed_or_at_once_alike),
	    cmocka_unit_test(test_damaged_images_are_refused_cleanly),
	    cmocka_unit_test(test_files_that_are_not_assemblies_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
