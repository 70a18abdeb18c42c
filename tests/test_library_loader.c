/* library_loader: a real library opened with dlopen (glibc's libm) gives
 * working functions; a missing library or function gives one phrase that
 * says what to install, and no pointer. */
#include "library_loader.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static struct {
	LIBRARY_FUNCTION_POINTER(cos)
	LIBRARY_FUNCTION_POINTER(sqrt)
} libm;

static void test_fills_every_function(void **state)
{
	const struct library_function functions[] = {LIBRARY_FUNCTION_ENTRY(libm, cos)
							 LIBRARY_FUNCTION_ENTRY(libm, sqrt)};
	char why[192] = "";

	(void)state;
	assert_true(library_load("libm.so.6", "libc6", functions, 2, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(libm.cos(0.0) == 1.0);
	assert_true(libm.sqrt(16.0) == 4.0);
}

static void test_says_what_to_install(void **state)
{
	void *pointer = NULL;
	const struct library_function missing_function[] = {{"no_such_function", &pointer}};
	char why[192];

	(void)state;
	assert_false(library_load("libprofcpu-none.so.1", "libprofcpu-none1", missing_function, 1,
				  why, sizeof(why)));
	assert_non_null(strstr(why, "cannot load libprofcpu-none.so.1"));
	assert_non_null(strstr(why, "install it (Debian's libprofcpu-none1)"));
	assert_false(library_load("libm.so.6", "libc6", missing_function, 1, why, sizeof(why)));
	assert_string_equal(why, "libm.so.6 has no no_such_function: install a newer libc6");
	assert_null(pointer);
}

/* A function found before the missing one does not point into the library
 * closed. */
static void test_fills_nothing_when_one_is_missing(void **state)
{
	void *found = NULL, *missing = NULL;
	const struct library_function functions[] = {{"cos", &found},
						     {"no_such_function", &missing}};
	char why[192];

	(void)state;
	assert_false(library_load("libm.so.6", "libc6", functions, 2, why, sizeof(why)));
	assert_null(found);
	assert_null(missing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fills_every_function),
	    cmocka_unit_test(test_says_what_to_install),
	    cmocka_unit_test(test_fills_nothing_when_one_is_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
