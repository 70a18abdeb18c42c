/* Kernel symbols from a kallsyms listing, read only as far as needed, and
 * the copy of the lines a capture used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernel_symbols.h"
#include "kernel_symbols_boot_cache.h"
#include "kernel_symbols_table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Core kernel sorted by address (an alias, data between), then a module's
 * lines in its own order, then an ftrace trampoline, as the kernel lists
 * them. */
static const char listing[] = "0000000000000000 A fixed_percpu_data\n"
			      "ffffffff81000000 T _stext\n"
			      "ffffffff81000000 T _text\n"
			      "ffffffff81000100 t helper\n"
			      "ffffffff81000150 t middle\n"
			      "ffffffff81000180 D some_data\n"
			      "ffffffff81000200 T later\n"
			      "ffffffffc0000100 t mod_b\t[nf_tables]\n"
			      "ffffffffc0000000 t mod_a\t[nf_tables]\n"
			      "ffffffffc0001000 t ftrace_trampoline\t[__builtin__ftrace]\n";

static struct kernel_symbols *open_text(const char *text, size_t length, bool in_part)
{
	return kernel_symbols_open(fmemopen((void *)text, length, "r"), in_part);
}

static void assert_names(struct kernel_symbols *symbols, uint64_t address, const char *expected,
			 uint64_t expected_offset)
{
	const char *name;
	uint64_t offset;

	assert_true(kernel_symbols_find(symbols, address, &name, &offset));
	assert_string_equal(name, expected);
	assert_int_equal(offset, expected_offset);
}

static void assert_unnamed(struct kernel_symbols *symbols, uint64_t address)
{
	const char *name;
	uint64_t offset;

	assert_false(kernel_symbols_find(symbols, address, &name, &offset));
}

static void test_core_modules_and_aliases(void **state)
{
	struct kernel_symbols *symbols = open_text(listing, sizeof(listing) - 1, true);

	(void)state;
	assert_non_null(symbols);
	assert_names(symbols, 0xffffffff81000010, "_stext", 0x10);
	assert_names(symbols, 0xffffffff81000140, "helper", 0x40);
	assert_names(symbols, 0xffffffff810001f0, "middle", 0xa0);
	assert_names(symbols, 0xffffffffc0000050, "mod_a", 0x50);
	assert_names(symbols, 0xffffffff81000200, "later", 0);
	assert_names(symbols, 0xffffffffc0000100, "mod_b", 0);
	assert_names(symbols, 0xffffffffc0001000, "ftrace_trampoline", 0);
	assert_unnamed(symbols, 0xffffffffc0001001); /* past the last symbol */
	assert_unnamed(symbols, 0xffffffff80000000);
	kernel_symbols_free(symbols);
}

/* arm64 (6.1) maps modules below the kernel image, not above it as x86-64
 * does: listed after the core, at lower addresses. */
static void test_modules_below_the_core(void **state)
{
	static const char arm64_listing[] = "ffff800008000000 T _text\n"
					    "ffff800008010000 T _stext\n"
					    "ffff800008010100 t helper\n"
					    "ffff800008010200 T later\n"
					    "ffff800001230000 t mod_a\t[nf_tables]\n"
					    "ffff800001230100 t mod_b\t[nf_tables]\n";
	struct kernel_symbols *symbols = open_text(arm64_listing, sizeof(arm64_listing) - 1, true);

	(void)state;
	assert_non_null(symbols);
	assert_names(symbols, 0xffff800008010140, "helper", 0x40);
	assert_names(symbols, 0xffff800001230050, "mod_a", 0x50);
	assert_names(symbols, 0xffff800001230100, "mod_b", 0);
	assert_names(symbols, 0xffff800008010200, "later", 0);
	assert_unnamed(symbols, 0xffff800001000000); /* below every symbol */
	kernel_symbols_free(symbols);
	/* Asked first, a module's address reads the listing whole. */
	symbols = open_text(arm64_listing, sizeof(arm64_listing) - 1, true);
	assert_names(symbols, 0xffff800001230104, "mod_b", 4);
	assert_names(symbols, 0xffff800008000004, "_text", 4);
	kernel_symbols_free(symbols);
}

static void test_hidden_addresses(void **state)
{
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t helper\n";

	(void)state;
	assert_null(open_text(hidden, sizeof(hidden) - 1, true));
	assert_null(open_text("", 0, true));
}

/* 20,000 core lines "ffffffff8100X000 t fN", a module's line at the end. */
static char *long_listing(size_t *length)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, length);

	for (unsigned i = 0; i < 20000; i++)
		fprintf(out, "%016" PRIx64 " t f%u\n", UINT64_C(0xffffffff81000000) + i * 0x1000,
			i);
	fprintf(out, "ffffffffc0000000 t in_module\t[m]\n");
	fclose(out);
	return text;
}

static void test_reads_only_as_far_as_needed(void **state)
{
	size_t length;
	char *text = long_listing(&length);
	FILE *in = fmemopen(text, length, "r");
	struct kernel_symbols *symbols = kernel_symbols_open(in, true);

	(void)state;
	assert_names(symbols, 0xffffffff81064010, "f100", 0x10);
	/* The stream's position counts what was taken from its buffer. */
	assert_true(ftell(in) < (long)length / 10);
	assert_names(symbols, 0xffffffff81003000, "f3", 0);
	assert_names(symbols, 0xffffffffc0000000, "in_module", 0);
	assert_names(symbols, 0xffffffff81064000 + 50 * 0x1000, "f150", 0);
	kernel_symbols_free(symbols);
	free(text);
}

/* The copy lists lines in the order they were first used: here _stext,
 * helper (where _stext ends), later, mod_a (where later ends), middle, mod_b;
 * read whole, it names each address as the listing did. */
static void test_copy_names_what_was_asked(void **state)
{
	static const uint64_t asked[] = {0xffffffff81000004, 0xffffffff81000200, 0xffffffff81000158,
					 0xffffffffc0000050};
	struct kernel_symbols *symbols = open_text(listing, sizeof(listing) - 1, true), *copied;
	char *copy = NULL;
	size_t copy_length, lines = 0;

	(void)state;
	kernel_symbols_copy_to(symbols, open_memstream(&copy, &copy_length), "# whole\n");
	for (size_t i = 0; i < sizeof(asked) / sizeof(*asked); i++)
		assert_true(
		    kernel_symbols_find(symbols, asked[i], &(const char *){0}, &(uint64_t){0}));
	assert_int_equal(kernel_symbols_end_copy(symbols), 0);
	kernel_symbols_free(symbols);
	for (const char *c = copy; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 7); /* each with the symbol after it, once; the last line */
	assert_non_null(strstr(copy, "# whole\n"));
	assert_non_null(strstr(copy, "ffffffffc0000000 t mod_a\t[nf_tables]\n"));

	copied = open_text(copy, copy_length, false);
	assert_names(copied, 0xffffffff81000004, "_stext", 4);
	assert_names(copied, 0xffffffff81000158, "middle", 8);
	assert_names(copied, 0xffffffff81000200, "later", 0);
	assert_names(copied, 0xffffffffc0000050, "mod_a", 0x50);
	assert_unnamed(copied, 0xffffffffc0001000); /* never asked for */
	kernel_symbols_free(copied);
	free(copy);
}

static FILE *open_listing(void)
{
	return fmemopen((void *)listing, sizeof(listing) - 1, "r");
}

/* The core kernel's lines, written as a table and mapped back, name the
 * core as the listing does; an address outside them reads the listing
 * anew. */
static void test_core_copy_falls_back_to_listing(void **state)
{
	struct kernel_symbols *symbols = open_text(listing, sizeof(listing) - 1, true), *core;
	struct kernel_symbols_table *table;
	FILE *out = tmpfile();

	(void)state;
	assert_non_null(out);
	assert_names(symbols, 0xffffffff81000100, "helper", 0);
	assert_true(kernel_symbols_write_core(symbols, out));
	assert_int_equal(fflush(out), 0);
	assert_names(symbols, 0xffffffffc0000050, "mod_a", 0x50); /* still whole */
	kernel_symbols_free(symbols);

	table = kernel_symbols_table_map(fileno(out), 0);
	assert_non_null(table);
	assert_int_equal(kernel_symbols_table_count(table), 4); /* _stext to later */
	core = kernel_symbols_open_table(table, open_listing);
	assert_names(core, 0xffffffff81000160, "middle", 0x10);
	assert_names(core, 0xffffffffc0000150, "mod_b", 0x50); /* from the listing */
	assert_names(core, 0xffffffff81000010, "_stext", 0x10);
	kernel_symbols_free(core);
	fclose(out);
}

/* A table on disk may be anything: one damaged anywhere is refused or
 * names within itself, never reads outside its file. */
static void test_damaged_table_is_refused(void **state)
{
	struct kernel_symbols *symbols = open_text(listing, sizeof(listing) - 1, true);
	char *bytes = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&bytes, &size);
	const char *name;
	uint64_t offset;

	(void)state;
	assert_true(kernel_symbols_write_core(symbols, out));
	fclose(out);
	kernel_symbols_free(symbols);
	for (size_t at = 0; at <= size; at++)
		for (unsigned flip = 1; flip < 256; flip <<= 1) {
			FILE *file = tmpfile();
			struct kernel_symbols_table *table;

			assert_non_null(file);
			if (at < size)
				bytes[at] ^= (char)flip;
			/* at == size: the table cut short by a byte */
			assert_int_equal(fwrite(bytes, at < size ? size : size - 1, 1, file), 1);
			fflush(file);
			if (at < size)
				bytes[at] ^= (char)flip;
			table = kernel_symbols_table_map(fileno(file), 0);
			fclose(file);
			if (!table)
				continue;
			symbols = kernel_symbols_open_table(table, NULL);
			for (uint64_t address = 0xffffffff81000000; address < 0xffffffff81000210;
			     address += 8)
				if (kernel_symbols_find(symbols, address, &name, &offset))
					assert_true(strlen(name) < size);
			kernel_symbols_free(symbols);
			if (at == size)
				break;
		}
	free(bytes);
}

/* The text symbols' addresses of this machine's /proc/kallsyms. */
static size_t read_kallsyms_addresses(uint64_t **addresses)
{
	FILE *kallsyms = fopen("/proc/kallsyms", "re");
	char line[512], type;
	size_t count = 0, capacity = 0;
	uint64_t address;

	*addresses = NULL;
	while (kallsyms && fgets(line, sizeof(line), kallsyms))
		if (sscanf(line, "%" SCNx64 " %c", &address, &type) == 2 && strchr("tTwW", type) &&
		    address) {
			if (count == capacity)
				*addresses = realloc(*addresses, (capacity = capacity * 2 + 1024) *
								     sizeof(uint64_t));
			(*addresses)[count++] = address;
		}
	if (kallsyms)
		fclose(kallsyms);
	return count;
}

/* `symbols` names addresses near every 97th of `addresses`, asked in a
 * scattered order, as `whole` does. */
static void assert_same_names(struct kernel_symbols *symbols, struct kernel_symbols *whole,
			      const uint64_t *addresses, size_t count)
{
	const char *name, *whole_name;
	uint64_t offset, whole_offset;

	for (size_t i = 0; i < count; i += 97) {
		uint64_t address = addresses[(i * 7919) % count] + (i % 5);
		bool found = kernel_symbols_find(symbols, address, &name, &offset);

		assert_int_equal(found,
				 kernel_symbols_find(whole, address, &whole_name, &whole_offset));
		if (found) {
			assert_string_equal(name, whole_name);
			assert_int_equal(offset, whole_offset);
		}
	}
}

/* On the real kernel: names read in part (addresses asked in a scattered
 * order) are the names the whole listing gives. This checks the ordering
 * facts the partial reading rests on, on the kernel the tests run on. */
static void test_this_kernel_in_part_as_whole(void **state)
{
	uint64_t *addresses;
	size_t count = read_kallsyms_addresses(&addresses);
	struct kernel_symbols *in_part, *whole;
	const char *name;
	uint64_t offset;

	(void)state;
	in_part = count ? kernel_symbols_open(fopen("/proc/kallsyms", "re"), true) : NULL;
	whole = count ? kernel_symbols_open(fopen("/proc/kallsyms", "re"), true) : NULL;
	if (!in_part || !whole) {
		kernel_symbols_free(in_part);
		kernel_symbols_free(whole);
		free(addresses);
		skip(); /* kallsyms shows no addresses to this user */
	}
	kernel_symbols_find(whole, UINT64_MAX, &name, &offset); /* reads it all */
	assert_same_names(in_part, whole, addresses, count);
	kernel_symbols_free(in_part);
	kernel_symbols_free(whole);
	free(addresses);
}

/* The first entry of a boot's copy (its table after 3 header lines):
 * its address, and where its name is in the file. */
static uint64_t first_symbol(const char *path, long *name_at)
{
	FILE *copy = fopen(path, "r");
	char line[640];
	uint64_t counts[2], address = 0;
	uint32_t name_offset = 0;

	assert_non_null(copy);
	for (int i = 0; i < 3; i++)
		assert_non_null(fgets(line, sizeof(line), copy));
	*name_at = ftell(copy);
	assert_int_equal(fread(counts, sizeof(counts), 1, copy), 1);
	assert_int_equal(fread(&address, 8, 1, copy), 1);
	assert_int_equal(fread(&name_offset, 4, 1, copy), 1);
	*name_at += (long)(sizeof(counts) + counts[0] * 16 + name_offset);
	fclose(copy);
	return address;
}

/* Changes the first letter of the first entry's name to 'Q' (or 'R');
 * returns the name as it is now. */
static char *rename_first_symbol(const char *path, long name_at)
{
	FILE *copy = fopen(path, "r+");
	char name[640];

	assert_non_null(copy);
	assert_int_equal(fseek(copy, name_at, SEEK_SET), 0);
	assert_non_null(fgets(name, sizeof(name), copy)); /* the NUL ends it */
	name[0] = name[0] == 'Q' ? 'R' : 'Q';
	assert_int_equal(fseek(copy, name_at, SEEK_SET), 0);
	assert_int_equal(fputc(name[0], copy), name[0]);
	fclose(copy);
	return strdup(name);
}

/* Names from the boot's copy of kallsyms (written by the first open, read
 * by the next) are those of the whole listing; a copy of another boot is
 * not used. */
static void test_this_kernel_boot_cache(void **state)
{
	char folder[] = "/tmp/profcpu-test-cache.XXXXXX", path[256], line[256], *renamed;
	uint64_t *addresses, address;
	long name_at;
	size_t count = read_kallsyms_addresses(&addresses);
	struct kernel_symbols *first, *cached, *whole;
	struct stat status;
	FILE *copy;

	(void)state;
	if (!count) {
		free(addresses);
		skip(); /* kallsyms shows no addresses to this user */
	}
	assert_non_null(mkdtemp(folder));
	setenv("XDG_CACHE_HOME", folder, 1);
	snprintf(path, sizeof(path), "%s/profcpu/kallsyms-core", folder);
	first = kernel_symbols_open_kallsyms("boot-one");
	assert_non_null(first);
	assert_int_equal(stat(path, &status), 0);
	assert_int_equal(status.st_mode & 0777, 0600);
	kernel_symbols_free(first);

	cached = kernel_symbols_open_kallsyms("boot-one");
	whole = kernel_symbols_open(fopen("/proc/kallsyms", "re"), false);
	assert_non_null(cached);
	assert_same_names(cached, whole, addresses, count);
	kernel_symbols_free(cached);
	kernel_symbols_free(whole);

	/* Names come from the copy: one changed there shows. */
	address = first_symbol(path, &name_at);
	renamed = rename_first_symbol(path, name_at);
	cached = kernel_symbols_open_kallsyms("boot-one");
	assert_names(cached, address, renamed, 0);
	kernel_symbols_free(cached);
	free(renamed);

	/* Another boot writes its own copy over this one. */
	kernel_symbols_free(kernel_symbols_open_kallsyms("boot-two"));
	copy = fopen(path, "r");
	assert_non_null(copy);
	assert_non_null(fgets(line, sizeof(line), copy));
	assert_non_null(fgets(line, sizeof(line), copy));
	assert_string_equal(line, "# boot_id boot-two\n");
	fclose(copy);
	unlink(path);
	snprintf(path, sizeof(path), "%s/profcpu", folder);
	rmdir(path);
	rmdir(folder);
	unsetenv("XDG_CACHE_HOME");
	free(addresses);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_core_modules_and_aliases),
	    cmocka_unit_test(test_modules_below_the_core),
	    cmocka_unit_test(test_hidden_addresses),
	    cmocka_unit_test(test_reads_only_as_far_as_needed),
	    cmocka_unit_test(test_copy_names_what_was_asked),
	    cmocka_unit_test(test_this_kernel_in_part_as_whole),
	    cmocka_unit_test(test_core_copy_falls_back_to_listing),
	    cmocka_unit_test(test_this_kernel_boot_cache),
	    cmocka_unit_test(test_damaged_table_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
