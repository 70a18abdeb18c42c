/* The native to IL offset maps of precompiled (ReadyToRun) .NET methods,
 * read from the debug info of the CoreLib of the .NET runtime installed on
 * this machine (ReadyToRun major version 16 on .NET 10: bit-packed
 * entries): nearly every method's map starts with its prolog at offset 0,
 * its offsets grow and stay inside the method's code, and the code at each
 * method's start is found at IL offset 0 of that method's token, generic
 * instantiations at that of their generic method's token. Damaged
 * and cut maps read as shorter maps or none, never out of their bytes.
 * The other encodings (up to major version 15, and 17's header and 3-bit
 * source types) have no image on this machine: they are checked on maps
 * written here by hand after debuginfostore.cpp's description. Skipped
 * where the SDK is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "whole_file.h"
#include "clr_metadata.h"
#include "managed_image.h"
#include "pe_image.h"
#include "readytorun.h"
#include "readytorun_bounds.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METHOD_DEF_TOKEN 0x06000000u

static char corelib[4096];

static bool find_corelib(void)
{
	glob_t found;
	bool ok =
	    glob("/usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll", 0,
		 NULL, &found) == 0;

	if (ok)
		snprintf(corelib, sizeof(corelib), "%s", found.gl_pathv[found.gl_pathc - 1]);
	globfree(&found);
	return ok;
}

struct corelib_image {
	uint8_t *data;
	size_t size;
	struct pe_image pe;
	struct readytorun r2r;
};

static void open_corelib(struct corelib_image *image)
{
	image->data = read_whole(corelib, &image->size);
	assert_true(pe_image_parse(&image->pe, image->data, image->size, NULL));
	assert_true(readytorun_parse(&image->r2r, &image->pe));
	assert_true(image->r2r.major_version >= 16);
}

/* The code of a method: from its first runtime function to the start of
 * the next method's (its funclets lie between). */
static uint32_t code_size(const struct readytorun *r2r, uint32_t first, uint32_t next_method)
{
	struct readytorun_runtime_function start, last;

	assert_true(readytorun_runtime_function(r2r, first, &start));
	assert_true(readytorun_runtime_function(r2r, next_method - 1, &last));
	return last.end_rva - start.begin_rva;
}

static int by_value(const void *a, const void *b)
{
	uint32_t left = *(const uint32_t *)a, right = *(const uint32_t *)b;

	return (left > right) - (left < right);
}

static void test_corelib_maps_are_whole_and_inside_their_code(void **state)
{
	struct corelib_image image;
	uint32_t rows, *firsts, count = 0, with_map = 0, prolog_first = 0, entries = 0;

	(void)state;
	if (!find_corelib())
		skip();
	open_corelib(&image);
	rows = readytorun_method_entry_count(&image.r2r.method_def_entry_points);
	firsts = calloc(rows + 1, sizeof(*firsts));
	assert_non_null(firsts);
	for (uint32_t row = 1; row <= rows; row++)
		if (readytorun_method_entry_point(&image.r2r, &image.r2r.method_def_entry_points,
						  row, &firsts[count]))
			count++;
	qsort(firsts, count, sizeof(*firsts), by_value);
	firsts[count] = image.r2r.runtime_function_count;
	for (uint32_t i = 0; i < count; i++) {
		struct readytorun_bounds bounds;
		struct managed_line_map_entry entry;
		const uint8_t *bytes;
		size_t available;
		uint32_t size, read = 0, previous = 0;

		if (i > 0 && firsts[i] == firsts[i - 1])
			continue;
		size = code_size(&image.r2r, firsts[i], firsts[i + 1]);
		if (!readytorun_debug_info(&image.r2r, firsts[i], &bytes, &available) ||
		    !readytorun_bounds_start(&bounds, bytes, available, image.r2r.major_version))
			continue;
		with_map++;
		while (readytorun_bounds_next(&bounds, &entry)) {
			if (read++ == 0)
				prolog_first += entry.native_offset == 0 &&
						entry.il_offset == MANAGED_IL_PROLOG;
			assert_true(entry.native_offset >= previous);
			assert_true(entry.native_offset <= size);
			assert_true(entry.il_offset < (1u << 24) ||
				    entry.il_offset >= MANAGED_IL_EPILOG);
			previous = entry.native_offset;
		}
		assert_int_equal(bounds.entries_left, 0); /* every entry was there */
		entries += read;
	}
	printf("CoreLib: %u methods with code, %u with a map (%u entries), %u starting with "
	       "the prolog at 0\n",
	       count, with_map, entries, prolog_first);
	assert_true(with_map >= count * 9 / 10);
	assert_true(prolog_first >= with_map * 9 / 10);
	free(firsts);
	free(image.data);
}

static void test_method_starts_are_their_methods_il_offset_0(void **state)
{
	struct corelib_image image;
	struct managed_image *managed;
	uint32_t rows, checked = 0, found = 0;

	(void)state;
	if (!find_corelib())
		skip();
	open_corelib(&image);
	managed = managed_image_open(-1, corelib, true);
	assert_non_null(managed);
	rows = readytorun_method_entry_count(&image.r2r.method_def_entry_points);
	for (uint32_t row = 1; row <= rows; row += 7) {
		struct readytorun_runtime_function function;
		uint32_t first, token, il_offset;
		const uint8_t *code;

		if (!readytorun_method_entry_point(&image.r2r, &image.r2r.method_def_entry_points,
						   row, &first) ||
		    !readytorun_runtime_function(&image.r2r, first, &function) ||
		    !(code = pe_image_at_rva(&image.pe, function.begin_rva, 1)))
			continue;
		checked++;
		if (!managed_image_il_offset(managed, (uint64_t)(code - image.data), &token,
					     &il_offset))
			continue;
		found++;
		/* Several methods may share one body: then the first's token. */
		assert_int_equal(il_offset, 0);
		assert_int_equal(token & 0xff000000u, METHOD_DEF_TOKEN);
	}
	printf("%u of %u method starts have an IL offset\n", found, checked);
	assert_true(found >= checked * 9 / 10);
	managed_image_free(managed);
	free(image.data);
}

/* Every code block's start, named as the resolver names it, is IL offset 0
 * of the method whose MethodDef the name names: instantiations of generic
 * types and methods (the image's instance entry points) too. */
static void test_tokens_are_those_of_the_named_methods(void **state)
{
	struct corelib_image image;
	struct managed_image *managed;
	struct readytorun_runtime_function function;
	uint32_t checked = 0, generic = 0, wrong = 0;

	(void)state;
	if (!find_corelib())
		skip();
	open_corelib(&image);
	managed = managed_image_open(-1, corelib, true);
	assert_non_null(managed);
	for (uint32_t i = 0; readytorun_runtime_function(&image.r2r, i, &function); i++) {
		const uint8_t *code = pe_image_at_rva(&image.pe, function.begin_rva, 1);
		uint64_t file_offset = (uint64_t)(code - image.data), offset;
		struct clr_method_def method;
		uint32_t token, il_offset;
		const char *name, *method_name;
		char expected[512];

		if (!code || !managed_image_lookup(managed, file_offset, &name, &offset) ||
		    offset != 0 ||
		    !managed_image_il_offset(managed, file_offset, &token, &il_offset))
			continue;
		assert_int_equal(il_offset, 0);
		assert_true(clr_metadata_method_def(managed_image_metadata(managed),
						    token & 0xffffff, &method));
		/* "... Type::Method(PARAMS)[PreJIT]"; a generic method's
		 * instantiation: "Type::Method<ARGS>(PARAMS)". */
		method_name = strstr(name, "::");
		snprintf(expected, sizeof(expected), "::%s", method.name);
		if (!method_name || strncmp(method_name, expected, strlen(expected)) ||
		    !strchr("(<", method_name[strlen(expected)]))
			wrong++;
		checked++;
		generic += strchr(name, '`') != NULL;
	}
	printf("%u method starts with a token (%u of generic types), %u of another name\n", checked,
	       generic, wrong);
	assert_true(generic > 1000);
	assert_true(wrong <= checked / 100);
	managed_image_free(managed);
	free(image.data);
}

/* Every cut of a real map, and every byte of one changed, reads as a map
 * no longer than the whole one, inside its bytes (ASan checks the reads). */
static void test_cut_and_damaged_maps_stay_in_their_bytes(void **state)
{
	struct corelib_image image;
	uint32_t tried = 0;

	(void)state;
	if (!find_corelib())
		skip();
	open_corelib(&image);
	for (uint32_t index = 0; index < image.r2r.runtime_function_count && tried < 50;
	     index += 97) {
		struct readytorun_bounds bounds;
		struct managed_line_map_entry entry;
		const uint8_t *bytes;
		size_t available, whole = 0, length;
		uint8_t *copy;

		if (!readytorun_debug_info(&image.r2r, index, &bytes, &available) ||
		    !readytorun_bounds_start(&bounds, bytes, available, image.r2r.major_version))
			continue;
		tried++;
		while (readytorun_bounds_next(&bounds, &entry))
			whole++;
		length = available < 256 ? available : 256;
		for (size_t cut = 0; cut <= length; cut++) {
			size_t read = 0;

			copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, bytes, cut);
			if (readytorun_bounds_start(&bounds, copy, cut, image.r2r.major_version))
				while (readytorun_bounds_next(&bounds, &entry))
					read++;
			assert_true(read <= whole);
			free(copy);
		}
		copy = malloc(length);
		assert_non_null(copy);
		for (size_t at = 0; at < length && at < 32; at++) {
			memcpy(copy, bytes, length);
			copy[at] ^= 0xff;
			if (readytorun_bounds_start(&bounds, copy, length, image.r2r.major_version))
				while (readytorun_bounds_next(&bounds, &entry))
					;
		}
		free(copy);
	}
	assert_true(tried > 0);
	free(image.data);
}

/* Nibble-encoded numbers, written as debuginfostore.cpp describes them. */
struct nibble_writer {
	uint8_t bytes[64];
	size_t nibbles;
};

static void write_nibble(struct nibble_writer *writer, unsigned nibble)
{
	uint8_t *byte = &writer->bytes[writer->nibbles / 2];

	*byte = writer->nibbles % 2 ? (uint8_t)(*byte | nibble << 4) : (uint8_t)nibble;
	writer->nibbles++;
}

static void write_number(struct nibble_writer *writer, uint32_t value)
{
	int groups = 1;

	while (groups < 11 && value >> (3 * groups))
		groups++;
	for (int group = groups - 1; group >= 0; group--)
		write_nibble(writer, (value >> (3 * group) & 7) | (group ? 8 : 0));
}

static size_t writer_bytes(const struct nibble_writer *writer)
{
	return (writer->nibbles + 1) / 2;
}

static const struct managed_line_map_entry example[] = {
    {0, MANAGED_IL_PROLOG}, {8, 0}, {16, 4}, {40, 20}, {44, MANAGED_IL_EPILOG}};
#define EXAMPLE_COUNT (sizeof(example) / sizeof(*example))

static void read_example(const uint8_t *bytes, size_t size, uint16_t major_version)
{
	struct readytorun_bounds bounds;
	struct managed_line_map_entry entry;
	size_t read = 0;

	assert_true(readytorun_bounds_start(&bounds, bytes, size, major_version));
	while (readytorun_bounds_next(&bounds, &entry)) {
		assert_true(read < EXAMPLE_COUNT);
		assert_int_equal(entry.native_offset, example[read].native_offset);
		assert_int_equal(entry.il_offset, example[read].il_offset);
		read++;
	}
	assert_int_equal(read, EXAMPLE_COUNT);
}

static void test_nibble_encoded_maps_of_older_images(void **state)
{
	struct nibble_writer bounds = {0}, info = {0};
	uint32_t previous = 0;

	(void)state;
	write_number(&bounds, EXAMPLE_COUNT);
	for (size_t i = 0; i < EXAMPLE_COUNT; i++) {
		write_number(&bounds, example[i].native_offset - previous);
		write_number(&bounds, example[i].il_offset + 3);
		write_number(&bounds, 1); /* a source type */
		previous = example[i].native_offset;
	}
	write_number(&info, (uint32_t)writer_bytes(&bounds));
	write_number(&info, 0); /* no variables */
	memcpy(info.bytes + writer_bytes(&info), bounds.bytes, writer_bytes(&bounds));
	read_example(info.bytes, writer_bytes(&info) + writer_bytes(&bounds), 9);
}

/* Major version 17: the fat header (0, then six sizes) and 3-bit source
 * types before each native delta and IL offset. */
static void test_packed_maps_with_a_fat_header(void **state)
{
	struct nibble_writer header = {0}, bounds = {0};
	uint8_t info[128] = {0};
	unsigned native_bits = 6, il_bits = 5, width = 3 + native_bits + il_bits, bit = 0;
	size_t packed_start, size;
	uint32_t previous = 0;

	(void)state;
	write_number(&bounds, EXAMPLE_COUNT);
	write_number(&bounds, native_bits - 1);
	write_number(&bounds, il_bits - 1);
	packed_start = writer_bytes(&bounds);
	for (size_t i = 0; i < EXAMPLE_COUNT; i++) {
		uint64_t entry =
		    5 /* source type */ | (uint64_t)(example[i].native_offset - previous) << 3 |
		    (uint64_t)(uint32_t)(example[i].il_offset + 3) << (3 + native_bits);

		for (unsigned b = 0; b < width; b++, bit++)
			bounds.bytes[packed_start + bit / 8] |=
			    (uint8_t)((entry >> b & 1) << (bit % 8));
		previous = example[i].native_offset;
	}
	size = packed_start + (bit + 7) / 8;
	write_number(&header, 0);
	write_number(&header, (uint32_t)size);
	for (int i = 0; i < 5; i++)
		write_number(&header, 0);
	memcpy(info, header.bytes, writer_bytes(&header));
	memcpy(info + writer_bytes(&header), bounds.bytes, size);
	read_example(info, writer_bytes(&header) + size, 17);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_corelib_maps_are_whole_and_inside_their_code),
	    cmocka_unit_test(test_method_starts_are_their_methods_il_offset_0),
	    cmocka_unit_test(test_tokens_are_those_of_the_named_methods),
	    cmocka_unit_test(test_cut_and_damaged_maps_stay_in_their_bytes),
	    cmocka_unit_test(test_nibble_encoded_maps_of_older_images),
	    cmocka_unit_test(test_packed_maps_with_a_fat_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
