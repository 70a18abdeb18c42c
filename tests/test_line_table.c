/* The DWARF line table reader on this very test program, which the build
 * compiles with -g, and on libc's debug file from Debian's libc6-dbg
 * (compressed sections, DWARF 5), and on a program built with DWARF 4
 * (the path in argv[1]), whose names are relative to the compilation folder
 * of their unit: a function written on one line is found on that line,
 * under the absolute path of this file, and addresses all through every
 * function get the line libdw gives them. */
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
#include <stdio.h>
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

static const char *dwarf4_program;

static struct elf_file *open_file(const char *path)
{
	elf_version(EV_CURRENT);
	return elf_file_open(open(path, O_RDONLY | O_CLOEXEC));
}

/* The line as native_symbols.c asks it: a name relative to the unit's
 * compilation folder joined to it through libdw's units. */
static bool find_line(struct line_table *table, struct dwarf_units *units, uint64_t address,
		      struct source_line *line, bool *relative_to_unit)
{
	Dwarf_Die unit;

	if (!line_table_find(table, address, line, relative_to_unit))
		return false;
	if (*relative_to_unit && dwarf_units_find(units, address, &unit))
		line->file = dwarf_units_source_path(units, &unit, line->file);
	return true;
}

/* The line libdw gives: the unit holding the address, its row. */
static bool libdw_line(struct dwarf_units *units, uint64_t address, struct source_line *line)
{
	Dwarf_Die unit;
	Dwarf_Line *row;
	const char *file;
	int number;

	if (!dwarf_units_find(units, address, &unit) || !(row = dwarf_getsrc_die(&unit, address)) ||
	    dwarf_lineno(row, &number) != 0 || number <= 0 ||
	    !(file = dwarf_linesrc(row, NULL, NULL)))
		return false;
	*line = (struct source_line){.file = dwarf_units_source_path(units, &unit, file),
				     .number = (uint32_t)number};
	return true;
}

/* only_here: addresses of code outside every unit's ranges that the line
 * table still covers, which libdw does not look up (the sanitizers'
 * constructors and destructors, _sub_I_00099_0 and the like). */
struct comparison {
	size_t addresses, with_line, differing, only_here, relative_to_unit;
};

/* Looks up `count` addresses spread through each function of `file`'s
 * .symtab (every address when `count` is 0) with both readers. */
static struct comparison compare_with_libdw(struct elf_file *file, size_t count)
{
	struct line_table *table = line_table_open(file);
	struct dwarf_units *units = dwarf_units_open(file);
	struct comparison comparison = {0};
	Elf_Scn *section = NULL;
	GElf_Shdr header;
	Elf_Data *data = NULL;
	size_t symbol_count = 0;

	assert_non_null(table);
	assert_non_null(units);
	while ((section = elf_nextscn(file->elf, section)))
		if (gelf_getshdr(section, &header) && header.sh_type == SHT_SYMTAB &&
		    header.sh_entsize && (data = elf_getdata(section, NULL)))
			symbol_count = data->d_size / header.sh_entsize;
	assert_true(symbol_count > 0);
	for (size_t i = 0; i < symbol_count; i++) {
		GElf_Sym symbol;
		uint64_t step;

		if (!gelf_getsym(data, (int)i, &symbol) ||
		    GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_size == 0 ||
		    symbol.st_shndx == SHN_UNDEF)
			continue;
		step = count && symbol.st_size > count ? symbol.st_size / count : 1;
		for (uint64_t offset = 0; offset < symbol.st_size; offset += step) {
			uint64_t address = symbol.st_value + offset;
			struct source_line ours = {0}, theirs = {0};
			bool relative_to_unit = false,
			     found = find_line(table, units, address, &ours, &relative_to_unit),
			     expected = libdw_line(units, address, &theirs);

			comparison.addresses++;
			comparison.relative_to_unit += found && relative_to_unit;
			comparison.with_line += expected;
			comparison.only_here += found && !expected;
			if ((!found && expected) ||
			    (found && expected &&
			     (ours.number != theirs.number || strcmp(ours.file, theirs.file)))) {
				if (comparison.differing++ < 5)
					print_message("%#lx: %s:%u here, %s:%u by libdw\n",
						      (unsigned long)address,
						      found ? ours.file : "-", ours.number,
						      theirs.file, theirs.number);
			}
		}
	}
	print_message("%zu addresses, %zu with a line, %zu differing, %zu with a line only here\n",
		      comparison.addresses, comparison.with_line, comparison.differing,
		      comparison.only_here);
	dwarf_units_free(units);
	line_table_free(table);
	return comparison;
}

static void test_function_on_one_line(void **state)
{
	struct elf_file *self = open_file("/proc/self/exe");
	struct line_table *table;
	struct source_line line = {0};
	bool relative_to_unit = true;
	const char *suffix = "/tests/test_line_table.c";

	(void)state;
	assert_int_equal(on_one_line(1), 4);
	assert_non_null(self);
	assert_non_null(table = line_table_open(self));
	assert_true(line_table_find(table, file_address_of((const void *)on_one_line), &line,
				    &relative_to_unit));
	assert_int_equal(line.number, one_line);
	/* meson compiles "../tests/test_line_table.c" from the build folder:
	 * DWARF 5 names that folder, and the name comes back joined to it. */
	assert_false(relative_to_unit);
	assert_int_equal(line.file[0], '/');
	assert_true(strlen(line.file) > strlen(suffix));
	assert_string_equal(line.file + strlen(line.file) - strlen(suffix), suffix);
	line_table_free(table);
	elf_file_close(self);
}

static void test_address_outside_every_unit(void **state)
{
	struct elf_file *self = open_file("/proc/self/exe");
	struct line_table *table;
	struct source_line line = {0};
	bool relative_to_unit;

	(void)state;
	assert_non_null(self);
	assert_non_null(table = line_table_open(self));
	assert_false(line_table_find(table, 0, &line, &relative_to_unit));
	assert_false(line_table_find(table, UINT64_MAX - 1, &line, &relative_to_unit));
	assert_null(line.file);
	line_table_free(table);
	elf_file_close(self);
}

/* Every address of every function of this program. */
static void test_same_lines_as_libdw_here(void **state)
{
	struct elf_file *self = open_file("/proc/self/exe");
	struct comparison comparison;

	(void)state;
	assert_non_null(self);
	comparison = compare_with_libdw(self, 0);
	assert_true(comparison.with_line > 1000);
	assert_int_equal(comparison.differing, 0);
	assert_true(comparison.only_here < comparison.addresses / 100);
	elf_file_close(self);
}

/* Every address of the DWARF 4 program's functions: their names come from
 * the line table relative, and are joined through libdw's units. */
static void test_same_lines_as_libdw_in_dwarf4(void **state)
{
	struct elf_file *program = open_file(dwarf4_program);
	struct comparison comparison;

	(void)state;
	assert_non_null(program);
	comparison = compare_with_libdw(program, 0);
	assert_true(comparison.with_line > 50);
	assert_int_equal(comparison.differing, 0);
	assert_true(comparison.relative_to_unit > 0);
	elf_file_close(program);
}

/* The debug file of the libc this program runs on, from its build-id. */
static void test_same_lines_as_libdw_in_libc(void **state)
{
	struct elf_file *libc = open_file("/lib/x86_64-linux-gnu/libc.so.6"), *debug;
	char hex[BUILD_ID_HEX_MAX], path[256];
	struct comparison comparison;

	(void)state;
	if (!libc)
		libc = open_file("/lib/aarch64-linux-gnu/libc.so.6");
	assert_non_null(libc);
	build_id_to_hex(&libc->build_id, hex);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	elf_file_close(libc);
	debug = open_file(path);
	if (!debug)
		fail_msg("%s: no debug file for libc; scripts/install-deps installs libc6-dbg",
			 path);
	comparison = compare_with_libdw(debug, 16);
	assert_true(comparison.with_line > 10000);
	assert_int_equal(comparison.differing, 0);
	assert_int_equal(comparison.only_here, 0);
	elf_file_close(debug);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_function_on_one_line),
	    cmocka_unit_test(test_address_outside_every_unit),
	    cmocka_unit_test(test_same_lines_as_libdw_here),
	    cmocka_unit_test(test_same_lines_as_libdw_in_dwarf4),
	    cmocka_unit_test(test_same_lines_as_libdw_in_libc),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DWARF4_PROGRAM\n", argv[0]);
		return 2;
	}
	dwarf4_program = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
