/* The DWARF line table reader on this very test program, which the build
 * compiles with -g: a function written on one line is found on that line,
 * under the absolute path of this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dwarf_units.h"
#include "elf_file.h"
#include "line_table.h"

#include <fcntl.h>
#include <link.h>
#include <string.h>

// clang-format off
__attribute__((noinline)) static int on_one_line(int x) { return x * 3 + 1; } static const uint32_t one_line = __LINE__;
// clang-format on

static int find_load_bias(struct dl_phdr_info *info, size_t size, void *bias)
{
	(void)size;
	*(uintptr_t *)bias = info->dlpi_addr; /* the first object is the program */
	return 1;
}

/* The address the program's DWARF gives `code`. */
static uint64_t file_address_of(const void *code)
{
	uintptr_t bias = 0;

	dl_iterate_phdr(find_load_bias, &bias);
	return (uint64_t)((uintptr_t)code - bias);
}

static struct dwarf_units *open_self(void)
{
	struct elf_file *self;

	elf_version(EV_CURRENT);
	self = elf_file_open(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
	assert_non_null(self);
	return dwarf_units_open(self);
}

static void test_function_on_one_line(void **state)
{
	struct dwarf_units *units = open_self();
	struct source_line line = {0};
	const char *suffix = "/tests/test_line_table.c";

	(void)state;
	assert_int_equal(on_one_line(1), 4);
	assert_non_null(units);
	assert_true(line_table_find(units, file_address_of((const void *)on_one_line), &line));
	assert_int_equal(line.number, one_line);
	/* meson compiles "../tests/test_line_table.c" from the build folder:
	 * the name comes back joined to it, whole. */
	assert_int_equal(line.file[0], '/');
	assert_true(strlen(line.file) > strlen(suffix));
	assert_string_equal(line.file + strlen(line.file) - strlen(suffix), suffix);
	dwarf_units_free(units);
}

static void test_address_outside_every_unit(void **state)
{
	struct dwarf_units *units = open_self();
	struct source_line line = {0};

	(void)state;
	assert_non_null(units);
	assert_false(line_table_find(units, 0, &line));
	assert_false(line_table_find(units, UINT64_MAX - 1, &line));
	assert_null(line.file);
	dwarf_units_free(units);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_function_on_one_line),
	    cmocka_unit_test(test_address_outside_every_unit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
