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

static void test_reads_a_growing_file(void **state)
{
	char path[] = "/tmp/profcpu-perfmap-XXXXXX";
	int writer = mkstemp(path), fd = open(path, O_RDONLY);
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;

	(void)state;
	assert_true(writer >= 0 && fd >= 0);
	assert_int_equal(write(writer, "a000 20 early\n", 14), 14);
	assert_int_equal(perfmap_read_more(map, fd), 0);
	assert_false(perfmap_lookup(map, 0xb000, &entry));
	assert_int_equal(write(writer, "b000 20 late\n", 13), 13);
	assert_int_equal(perfmap_read_more(map, fd), 0);
	assert_true(perfmap_lookup(map, 0xb01f, &entry));
	assert_string_equal(entry.name, "late");
	assert_true(perfmap_lookup(map, 0xa000, &entry));
	assert_string_equal(entry.name, "early");
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
	perfmap_free(map);
}

/* Dynamic methods reuse addresses: a sample takes the line that had
 * appeared by its time, and the answer says until when it holds. */
static void test_reused_address_named_by_time(void **state)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;

	(void)state;
	perfmap_set_time(map, 100);
	add(map, "1000 40 Phase1\n");
	perfmap_set_time(map, 200);
	add(map, "1000 40 Phase2\n1020 10 Inner\n");
	perfmap_set_time(map, 300);
	add(map, "1000 40 Phase3\n");
	assert_true(perfmap_lookup_at(map, 0x1010, 50, &entry)); /* before any line: the first */
	assert_string_equal(entry.name, "Phase1");
	assert_int_equal(entry.valid_until, 200);
	assert_true(perfmap_lookup_at(map, 0x1010, 150, &entry));
	assert_string_equal(entry.name, "Phase1");
	assert_true(perfmap_lookup_at(map, 0x1010, 250, &entry));
	assert_string_equal(entry.name, "Phase2");
	assert_int_equal(entry.valid_until, 300);
	assert_true(perfmap_lookup_at(map, 0x1024, 250, &entry)); /* same time: the later line */
	assert_string_equal(entry.name, "Inner");
	assert_true(perfmap_lookup_at(map, 0x1024, 350, &entry));
	assert_string_equal(entry.name, "Phase3");
	assert_int_equal(entry.valid_until, UINT64_MAX);
	assert_true(perfmap_lookup(map, 0x1010, &entry));
	assert_string_equal(entry.name, "Phase3");
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
	    cmocka_unit_test(test_reads_a_growing_file),
	    cmocka_unit_test(test_reused_address_named_by_time),
	    cmocka_unit_test(test_overlong_line_is_skipped_in_any_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
