/* The JIT code's line maps of one process before any came: a lookup, as
 * the replay makes for every JIT frame of a .NET process whose diagnostics
 * socket gave no maps, finds nothing (and sorts no array that is not
 * there: qsort() of NULL is undefined, which UBSan reported from
 * collect_dotnet_reuse). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "managed_lines.h"

static void test_no_code_yet(void **state)
{
	struct managed_lines *lines = managed_lines_new();
	struct source_line line;

	(void)state;
	assert_non_null(lines);
	assert_int_equal(managed_lines_code_count(lines), 0);
	assert_false(managed_lines_lookup(lines, 0x7f0000001000, &line));
	assert_false(managed_lines_lookup_return(lines, 0x7f0000001000, &line));
	managed_lines_free(lines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_code_yet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
