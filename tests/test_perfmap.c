/* The perf map parser, on map text as .NET and node write it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "perfmap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add(struct perfmap *map, const char *text)
{
	perfmap_add_text(map, text, strlen(text));
}

static void test_dotnet_names_with_spaces(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;

	(void)state;
	add(map, "00007F148458E6A0 1b0 int32 [System.Private.CoreLib] "
		 "System.SpanHelpers::IndexOf(char&,char,int32)[OptimizedTier1]\n"
		 "0x7f1484000000 10 stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>\n");
	assert_true(perfmap_lookup(map, 0x7F148458E6A0 + 0x10, &entry));
	assert_string_equal(entry.name,
			    "int32 [System.Private.CoreLib] "
			    "System.SpanHelpers::IndexOf(char&,char,int32)[OptimizedTier1]");
	assert_true(perfmap_lookup(map, 0x7f1484000000, &entry));
	assert_string_equal(entry.name, "stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>");
	assert_false(perfmap_lookup(map, 0x7f1484000010, &entry));
	assert_false(perfmap_lookup(map, 0x1000, &entry));
	perfmap_free(map);
}

static void test_empty_map_finds_nothing(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;

	(void)state;
	assert_false(perfmap_lookup(map, 0x1000, &entry));
	add(map, "no newline yet");
	assert_false(perfmap_lookup(map, 0x1000, &entry));
	perfmap_free(map);
}

static void test_later_line_for_same_start_wins(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;

	(void)state;
	add(map, "1000 100 Tier0 version\n2000 10 other\n1000 80 Tier1 version\n");
	assert_true(perfmap_lookup(map, 0x1010, &entry));
	assert_string_equal(entry.name, "Tier1 version");
	assert_false(perfmap_lookup(map, 0x1090, &entry));
	assert_int_equal(perfmap_entry_count(map), 2);
	perfmap_free(map);
}

static void test_unterminated_line_waits_for_its_end(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;

	(void)state;
	add(map, "1000 10 first\n2000 10 sec");
	assert_false(perfmap_lookup(map, 0x2000, &entry));
	add(map, "ond\n");
	assert_true(perfmap_lookup(map, 0x2000, &entry));
	assert_string_equal(entry.name, "second");
	assert_true(perfmap_lookup(map, 0x1000, &entry));
	assert_string_equal(entry.name, "first");
	perfmap_free(map);
}

static void test_malformed_lines_are_counted_and_skipped(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;
	static const char nul_line[] = "5000 10 with\0nul\n";

	(void)state;
	add(map, "garbage\n"
		 "zz 10 not hex\n"
		 "1000 0 zero size\n"
		 "1000 10\n"
		 "ffffffffffffffff 10 wraps around\n"
		 "11112222333344445 10 seventeen digits\n"
		 "\n"
		 "3000 10 good\n");
	perfmap_add_text(map, nul_line, sizeof(nul_line) - 1);
	assert_int_equal(perfmap_malformed_count(map), 8);
	assert_int_equal(perfmap_entry_count(map), 1);
	assert_true(perfmap_lookup(map, 0x3005, &entry));
	assert_string_equal(entry.name, "good");
	perfmap_free(map);
}

static void test_reads_a_growing_file_and_writes_a_copy(void **state)
{
	char path[] = "/tmp/profcpu-perfmap-XXXXXX";
	int writer = mkstemp(path), fd = open(path, O_RDONLY);
	struct perfmap *map = perfmap_new(), *copy = perfmap_new();
	struct perfmap_entry entry;
	char *text = NULL;
	size_t length = 0;
	FILE *out;

	(void)state;
	assert_true(writer >= 0 && fd >= 0);
	assert_int_equal(write(writer, "a000 20 early\n", 14), 14);
	assert_int_equal(perfmap_read_more(map, fd), 0);
	assert_false(perfmap_lookup(map, 0xb000, &entry));
	assert_int_equal(write(writer, "b000 20 late\n", 13), 13);
	assert_int_equal(perfmap_read_more(map, fd), 0);
	assert_true(perfmap_lookup(map, 0xb01f, &entry));
	assert_string_equal(entry.name, "late");

	out = open_memstream(&text, &length);
	assert_int_equal(perfmap_write_copy(map, out), 0);
	fclose(out);
	perfmap_add_text(copy, text, length);
	assert_true(perfmap_lookup(copy, 0xa000, &entry));
	assert_string_equal(entry.name, "early");
	assert_int_equal(perfmap_entry_count(copy), 2);

	free(text);
	perfmap_free(copy);
	perfmap_free(map);
	close(fd);
	close(writer);
	unlink(path);
}

/* A line longer than PERFMAP_MAX_LINE, however it arrives (one byte at a
 * time here), is counted and skipped; the lines around it are kept. */
static void test_overlong_line_is_skipped_in_any_split(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;
	size_t long_length = 3 * PERFMAP_MAX_LINE;

	(void)state;
	add(map, "1000 10 before\n2000 10 ");
	for (size_t i = 0; i < long_length; i++)
		perfmap_add_text(map, "x", 1);
	add(map, "\n3000 10 after\n");
	assert_int_equal(perfmap_long_line_count(map), 1);
	assert_int_equal(perfmap_entry_count(map), 2);
	assert_true(perfmap_lookup(map, 0x1000, &entry));
	assert_false(perfmap_lookup(map, 0x2000, &entry));
	assert_true(perfmap_lookup(map, 0x3000, &entry));
	assert_string_equal(entry.name, "after");
	assert_true(perfmap_text_size(map) < 64);
	perfmap_free(map);
}

/* The copy of a map too big to keep whole: the entries that name sampled
 * addresses, each once. */
static void test_writes_the_entries_holding_addresses(void **state)
{
	struct perfmap *map = perfmap_new();
	uint64_t addresses[] = {0x3004, 0x1000, 0x3000, 0x9999};
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	(void)state;
	add(map, "1000 10 one\n2000 10 two\n3000 10 three\n");
	assert_int_equal(perfmap_write_entries_holding(map, addresses, 4, out), 2);
	fclose(out);
	assert_string_equal(text, "1000 10 one\n3000 10 three\n");
	free(text);
	perfmap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dotnet_names_with_spaces),
	    cmocka_unit_test(test_empty_map_finds_nothing),
	    cmocka_unit_test(test_later_line_for_same_start_wins),
	    cmocka_unit_test(test_unterminated_line_waits_for_its_end),
	    cmocka_unit_test(test_malformed_lines_are_counted_and_skipped),
	    cmocka_unit_test(test_reads_a_growing_file_and_writes_a_copy),
	    cmocka_unit_test(test_overlong_line_is_skipped_in_any_split),
	    cmocka_unit_test(test_writes_the_entries_holding_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
