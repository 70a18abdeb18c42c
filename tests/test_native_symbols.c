/* Pieces of the native symbol library: build-id notes, .gnu_debuglink,
 * file offset to address, demangling, the sorted symbol table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "build_id.h"
#include "demangle.h"
#include "elf_file.h"
#include "symbol_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A note as the linker writes it: namesz, descsz, type, "GNU\0", desc. */
static size_t put_note(uint8_t *at, uint32_t type, const char *name, const uint8_t *desc,
		       uint32_t desc_size)
{
	uint32_t name_size = (uint32_t)strlen(name) + 1, header[3] = {name_size, desc_size, type};
	size_t name_padded = (name_size + 3) & ~3u, desc_padded = (desc_size + 3) & ~3u;

	memcpy(at, header, sizeof(header));
	memcpy(at + 12, name, name_size);
	memcpy(at + 12 + name_padded, desc, desc_size);
	return 12 + name_padded + desc_padded;
}

static void test_build_id_found_after_other_notes(void **state)
{
	uint8_t notes[128] = {0}, id_bytes[20], abi[16] = {0};
	Elf_Data data = {.d_type = ELF_T_NHDR, .d_buf = notes, .d_version = EV_CURRENT};
	struct build_id id = {.size = 0};
	char hex[BUILD_ID_HEX_MAX];

	(void)state;
	elf_version(EV_CURRENT);
	for (int i = 0; i < 20; i++)
		id_bytes[i] = (uint8_t)(i * 17);
	data.d_size = put_note(notes, NT_GNU_ABI_TAG, "GNU", abi, sizeof(abi));
	data.d_size += put_note(notes + data.d_size, NT_GNU_BUILD_ID, "GNU", id_bytes, 20);
	assert_true(build_id_from_notes(&data, &id));
	assert_int_equal(id.size, 20);
	build_id_to_hex(&id, hex);
	assert_string_equal(hex, "00112233445566778899aabbccddeeff10213243");
}

static void test_build_id_ignores_other_owners_and_truncated_notes(void **state)
{
	uint8_t notes[64] = {0}, id_bytes[20] = {1, 2, 3};
	Elf_Data data = {.d_type = ELF_T_NHDR, .d_buf = notes, .d_version = EV_CURRENT};
	struct build_id id = {.size = 0};

	(void)state;
	elf_version(EV_CURRENT);
	data.d_size = put_note(notes, NT_GNU_BUILD_ID, "Go", id_bytes, 20);
	assert_false(build_id_from_notes(&data, &id));
	data.d_size = put_note(notes, NT_GNU_BUILD_ID, "GNU", id_bytes, 20) - 4;
	assert_false(build_id_from_notes(&data, &id));
}

static void test_build_id_equality(void **state)
{
	struct build_id a = {.bytes = {1, 2, 3}, .size = 3}, b = a;

	(void)state;
	assert_true(build_id_equal(&a, &b));
	b.bytes[2] = 4;
	assert_false(build_id_equal(&a, &b));
	b = a;
	b.size = 2;
	assert_false(build_id_equal(&a, &b));
}

static void test_debuglink_name_and_crc_in_both_byte_orders(void **state)
{
	static const uint8_t little[] = "libcoreclr.so.dbg\0\0\0\x78\x56\x34\x12";
	static const uint8_t big[] = "a.dbg\0\0\0\x12\x34\x56\x78";
	struct debuglink link;

	(void)state;
	assert_true(debuglink_parse(little, sizeof(little) - 1, false, &link));
	assert_string_equal(link.name, "libcoreclr.so.dbg");
	assert_int_equal(link.crc, 0x12345678);
	assert_true(debuglink_parse(big, sizeof(big) - 1, true, &link));
	assert_string_equal(link.name, "a.dbg");
	assert_int_equal(link.crc, 0x12345678);
}

static void test_debuglink_refuses_paths_and_truncation(void **state)
{
	static const uint8_t escape[] = "../../etc/shadow\0\0\0\0\0\0\0";
	static const uint8_t dotdot[] = "..\0\0\0\0\0\0";
	static const uint8_t no_crc[] = "a.dbg\0\0\0\x12\x34";
	static const uint8_t no_nul[] = "abcd";
	struct debuglink link;

	(void)state;
	assert_false(debuglink_parse(escape, sizeof(escape) - 1, false, &link));
	assert_false(debuglink_parse(dotdot, sizeof(dotdot) - 1, false, &link));
	assert_false(debuglink_parse(no_crc, sizeof(no_crc) - 1, false, &link));
	assert_false(debuglink_parse(no_nul, sizeof(no_nul) - 1, false, &link));
}

static void test_debuglink_crc_of_file(void **state)
{
	char path[] = "/tmp/profcpu-crc-XXXXXX";
	int fd = mkstemp(path);
	uint32_t crc;

	(void)state;
	assert_true(fd >= 0);
	/* The CRC-32 check value of "123456789". */
	assert_int_equal(write(fd, "123456789", 9), 9);
	assert_true(debuglink_crc_of_file(fd, &crc));
	assert_int_equal(crc, 0xCBF43926);
	close(fd);
	unlink(path);
}

static void test_file_offset_to_address_through_load_segments(void **state)
{
	/* libcoreclr.so's layout: code is mapped 0x1000 above its file offset. */
	static const struct load_segment segments[] = {
	    {.file_offset = 0, .file_size = 0x1c8998, .address = 0},
	    {.file_offset = 0x1c89a0, .file_size = 0x4b0600, .address = 0x1c99a0},
	    {.file_offset = 0x678fa0, .file_size = 0x267d0, .address = 0x67afa0},
	};
	uint64_t address;

	(void)state;
	assert_true(load_segments_find_address(segments, 3, 0x1c8eb0, &address));
	assert_int_equal(address, 0x1c9eb0);
	assert_true(load_segments_find_address(segments, 3, 0x100, &address));
	assert_int_equal(address, 0x100);
	assert_false(load_segments_find_address(segments, 3, 0x1c899c, &address));
	assert_false(load_segments_find_address(segments, 3, 0x678fa0 + 0x267d0, &address));
	assert_false(load_segments_find_address(segments, 0, 0, &address));
}

static void test_demangles_cpp_and_leaves_c_alone(void **state)
{
	char *name;

	(void)state;
	name = demangle("_ZN4demo6WidgetIiE4spinEi", MANGLING_NATIVE);
	assert_string_equal(name, "demo::Widget<int>::spin(int)");
	free(name);
	name = demangle("_ZNKSt6vectorIiSaIiEE4sizeEv", MANGLING_NATIVE);
	assert_string_equal(name, "std::vector<int, std::allocator<int> >::size() const");
	free(name);
	assert_null(demangle("coreclr_initialize", MANGLING_NATIVE));
	assert_null(demangle("_Z", MANGLING_NATIVE));
	assert_null(demangle("_ZZZZZZZZZZZ", MANGLING_NATIVE));
}

static void test_symbol_table_sizes_aliases_and_demangling(void **state)
{
	struct symbol_table *table = symbol_table_new();
	const char *name;
	uint64_t offset;

	(void)state;
	symbol_table_add(table, "local_alias", 0x1000, 0x40, SYMBOL_RANK_LOCAL);
	symbol_table_add(table, "_ZN2ns3runEv", 0x1000, 0x40, SYMBOL_RANK_GLOBAL);
	symbol_table_add(table, "label", 0x2000, 0, SYMBOL_RANK_LABEL);
	symbol_table_add(table, "after_label", 0x2100, 0x10, SYMBOL_RANK_GLOBAL);
	symbol_table_finish(table);
	assert_int_equal(symbol_table_count(table), 3);
	assert_true(symbol_table_find(table, 0x1010, &name, &offset));
	assert_string_equal(name, "ns::run()");
	assert_int_equal(offset, 0x10);
	/* Past a sized symbol: an unnamed function, not more of ns::run(). */
	assert_false(symbol_table_find(table, 0x1040, &name, &offset));
	assert_true(symbol_table_find(table, 0x20ff, &name, &offset));
	assert_string_equal(name, "label");
	assert_false(symbol_table_find(table, 0x0fff, &name, &offset));
	assert_false(symbol_table_find(table, 0x2110, &name, &offset));
	symbol_table_free(table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_id_found_after_other_notes),
	    cmocka_unit_test(test_build_id_ignores_other_owners_and_truncated_notes),
	    cmocka_unit_test(test_build_id_equality),
	    cmocka_unit_test(test_debuglink_name_and_crc_in_both_byte_orders),
	    cmocka_unit_test(test_debuglink_refuses_paths_and_truncation),
	    cmocka_unit_test(test_debuglink_crc_of_file),
	    cmocka_unit_test(test_file_offset_to_address_through_load_segments),
	    cmocka_unit_test(test_demangles_cpp_and_leaves_c_alone),
	    cmocka_unit_test(test_symbol_table_sizes_aliases_and_demangling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
