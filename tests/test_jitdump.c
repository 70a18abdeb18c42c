/* The jitdump parser, on records built as .NET and perf's jitdump
 * specification lay them out, fed whole, byte by byte, cut off and
 * damaged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitdump.h"

#include <stdlib.h>
#include <string.h>

struct bytes {
	unsigned char data[4096];
	size_t length;
};

static void put(struct bytes *out, const void *data, size_t length)
{
	assert_true(out->length + length <= sizeof(out->data));
	memcpy(out->data + out->length, data, length);
	out->length += length;
}

static void put_u32(struct bytes *out, uint32_t value)
{
	put(out, &value, sizeof(value));
}

static void put_u64(struct bytes *out, uint64_t value)
{
	put(out, &value, sizeof(value));
}

static void put_header(struct bytes *out, uint64_t flags)
{
	put_u32(out, 0x4A695444); /* magic */
	put_u32(out, 1);	  /* version */
	put_u32(out, 40);	  /* header size */
	put_u32(out, 62);	  /* EM_X86_64 */
	put_u32(out, 0);
	put_u32(out, 4242); /* pid */
	put_u64(out, 1);    /* time */
	put_u64(out, flags);
}

/* A code load of `name` with `code_size` bytes of code after it. */
static void put_code_load(struct bytes *out, uint64_t time, uint64_t address, uint64_t code_size,
			  const char *name)
{
	size_t name_size = strlen(name) + 1;

	put_u32(out, 0);
	put_u32(out, (uint32_t)(56 + name_size + code_size));
	put_u64(out, time);
	put_u32(out, 4242);
	put_u32(out, 4243);
	put_u64(out, address); /* vma */
	put_u64(out, address);
	put_u64(out, code_size);
	put_u64(out, 7); /* code index */
	put(out, name, name_size);
	for (uint64_t i = 0; i < code_size; i++)
		put(out, "\xcc", 1);
}

static void put_code_move(struct bytes *out, uint64_t time, uint64_t from, uint64_t to,
			  uint64_t size)
{
	put_u32(out, 1);
	put_u32(out, 64);
	put_u64(out, time);
	put_u32(out, 4242);
	put_u32(out, 4243);
	put_u64(out, to);
	put_u64(out, from);
	put_u64(out, to);
	put_u64(out, size);
	put_u64(out, 7);
}

/* A debug-info record with one line entry: read past. */
static void put_debug_info(struct bytes *out, uint64_t address)
{
	put_u32(out, 2);
	put_u32(out, 16 + 16 + 16 + 6);
	put_u64(out, 5);
	put_u64(out, address);
	put_u64(out, 1);
	put_u64(out, address);
	put_u32(out, 12);
	put_u32(out, 0);
	put(out, "a.cs\0\0", 6);
}

static const char *name_at(struct jitdump *dump, uint64_t address, uint64_t time)
{
	struct code_range range;

	return jitdump_lookup(dump, address, time, &range) ? range.name : NULL;
}

static void build_reuse(struct bytes *out)
{
	put_header(out, 0);
	put_code_load(out, 100, 0x7000, 0x30, "int64 [Anonymously Hosted] dynamicClass::Phase1()");
	put_debug_info(out, 0x7000);
	put_code_load(out, 200, 0x7000, 0x30, "int64 [Anonymously Hosted] dynamicClass::Phase2()");
	put_code_load(out, 150, 0x9000, 0x10, "stub CreateHelper<DynamicHelper>");
	put_code_move(out, 300, 0x9000, 0xa000, 0x10);
}

static void test_reused_address_named_by_time(void **state)
{
	struct bytes file = {0};
	struct jitdump *dump = jitdump_new();
	struct jitdump_summary summary;
	struct code_range range;

	(void)state;
	build_reuse(&file);
	jitdump_add_bytes(dump, file.data, file.length);
	assert_string_equal(name_at(dump, 0x7010, 150),
			    "int64 [Anonymously Hosted] dynamicClass::Phase1()");
	assert_string_equal(name_at(dump, 0x7010, 250),
			    "int64 [Anonymously Hosted] dynamicClass::Phase2()");
	assert_true(jitdump_lookup(dump, 0x7010, 150, &range));
	assert_int_equal(range.valid_until, 200);
	assert_null(name_at(dump, 0x7030, 250));
	/* The stub moved at 300: gone from its old place, named at the new. */
	assert_string_equal(name_at(dump, 0x9004, 250), "stub CreateHelper<DynamicHelper>");
	assert_null(name_at(dump, 0x9004, 350));
	assert_string_equal(name_at(dump, 0xa004, 350), "stub CreateHelper<DynamicHelper>");
	jitdump_summarize(dump, &summary);
	assert_true(summary.valid && summary.timed);
	assert_int_equal(summary.code_loads, 3);
	assert_int_equal(summary.code_moves, 1);
	assert_int_equal(summary.other_records, 1);
	assert_int_equal(summary.missing_bytes, 0);
	assert_null(summary.error);
	jitdump_free(dump);
}

static void test_bytes_one_at_a_time(void **state)
{
	struct bytes file = {0};
	struct jitdump *dump = jitdump_new();

	(void)state;
	build_reuse(&file);
	for (size_t i = 0; i < file.length; i++)
		jitdump_add_bytes(dump, file.data + i, 1);
	assert_string_equal(name_at(dump, 0x7010, 250),
			    "int64 [Anonymously Hosted] dynamicClass::Phase2()");
	assert_string_equal(name_at(dump, 0xa004, 350), "stub CreateHelper<DynamicHelper>");
	jitdump_free(dump);
}

/* A copy written from the bytes as they are cleared, in pieces that cut
 * records anywhere: each code's first 64 bytes (its prolog) kept, the rest
 * of the code (0xcc here) zeroed, every other byte kept, and the copy
 * names the same code as the original. */
static void test_clearing_code_keeps_the_rest(void **state)
{
	struct bytes file = {0}, copy;
	struct jitdump *dump = jitdump_new(), *reread = jitdump_new();
	size_t kept = 0, cleared = 0;

	(void)state;
	put_header(&file, 0);
	put_code_load(&file, 100, 0x7000, 100, "int64 [App] Demo.Program::Spin()");
	put_debug_info(&file, 0x7000);
	put_code_load(&file, 200, 0x8000, 0x30, "stub CreateHelper<DynamicHelper>");
	copy = file;
	for (size_t at = 0; at < copy.length; at += 7)
		jitdump_add_bytes_clearing_code(dump, copy.data + at,
						copy.length - at < 7 ? copy.length - at : 7);
	for (size_t i = 0; i < file.length; i++) {
		if (file.data[i] != 0xcc)
			assert_int_equal(copy.data[i], file.data[i]);
		else if (copy.data[i] == 0xcc)
			kept++;
		else
			cleared += copy.data[i] == 0;
	}
	assert_int_equal(kept, 64 + 0x30);
	assert_int_equal(cleared, 100 - 64);
	jitdump_add_bytes(reread, copy.data, copy.length);
	assert_string_equal(name_at(reread, 0x7010, 150), "int64 [App] Demo.Program::Spin()");
	assert_string_equal(name_at(reread, 0x8004, 250), "stub CreateHelper<DynamicHelper>");
	jitdump_free(dump);
	jitdump_free(reread);
}

/* As .NET 10's own jitdump ends: a stub block record that claims 64 KB the
 * file does not hold. What came before is kept; the rest may come later. */
static void test_record_past_the_end_waits(void **state)
{
	struct bytes file = {0}, rest = {0};
	struct jitdump *dump = jitdump_new();
	struct jitdump_summary summary;

	(void)state;
	put_header(&file, 0);
	put_code_load(&file, 10, 0x1000, 0x20, "stub ThePreStub");
	put_u32(&file, 0);
	put_u32(&file, 56 + 6 + 65536);
	put_u64(&file, 20);
	jitdump_add_bytes(dump, file.data, file.length);
	jitdump_summarize(dump, &summary);
	assert_int_equal(summary.code_loads, 1);
	assert_int_equal(summary.incomplete_bytes, 16);
	assert_int_equal(summary.missing_bytes, 56 + 6 + 65536 - 16);
	assert_string_equal(name_at(dump, 0x1000, 10), "stub ThePreStub");

	/* The runtime finishes the record after all. */
	put_u32(&rest, 4242);
	put_u32(&rest, 4243);
	put_u64(&rest, 0x50000);
	put_u64(&rest, 0x50000);
	put_u64(&rest, 65536);
	put_u64(&rest, 8);
	put(&rest, "block", 6);
	jitdump_add_bytes(dump, rest.data, rest.length);
	jitdump_summarize(dump, &summary);
	assert_int_equal(summary.missing_bytes, 65536);
	for (int i = 0; i < 16; i++)
		jitdump_add_bytes(dump, file.data, 4096);
	put_code_load(&rest, 30, 0x2000, 0x10, "after");
	jitdump_add_bytes(dump, rest.data + rest.length - (56 + 6 + 0x10), 56 + 6 + 0x10);
	jitdump_summarize(dump, &summary);
	assert_int_equal(summary.missing_bytes, 0);
	assert_int_equal(summary.code_loads, 3);
	assert_string_equal(name_at(dump, 0x50100, 40), "block");
	assert_string_equal(name_at(dump, 0x2000, 40), "after");
	jitdump_free(dump);
}

/* The framing parser tells what a whole parse tells of a file's end: where
 * the last record ends, or how much a record cut off still claims. */
static void test_framing_summary(void **state)
{
	struct bytes file = {0};
	struct jitdump_summary whole, framing;

	(void)state;
	build_reuse(&file);
	put_code_load(&file, 400, 0xb000, 0x40, "cut off in its code");
	for (size_t end = 0; end <= file.length; end++) {
		struct jitdump *dump = jitdump_new(), *framed = jitdump_new_framing();

		for (size_t i = 0; i < end; i++)
			jitdump_add_bytes(framed, file.data + i, 1);
		jitdump_add_bytes(dump, file.data, end);
		jitdump_summarize(dump, &whole);
		jitdump_summarize(framed, &framing);
		assert_int_equal(framing.valid, whole.valid);
		assert_int_equal(framing.bytes, whole.bytes);
		assert_int_equal(framing.incomplete_bytes, whole.incomplete_bytes);
		assert_int_equal(framing.missing_bytes, whole.missing_bytes);
		assert_int_equal(framing.code_moves, whole.code_moves);
		if (!whole.missing_bytes)
			assert_int_equal(framing.code_loads, whole.code_loads);
		assert_null(name_at(framed, 0x7010, 150)); /* it keeps no names */
		jitdump_free(dump);
		jitdump_free(framed);
	}
	assert_int_equal(whole.code_loads, 4);
}

static void test_damaged_files(void **state)
{
	struct bytes file = {0};
	struct jitdump *dump = jitdump_new();
	struct jitdump_summary summary;
	uint32_t swapped = 0x4454694A;

	(void)state;
	/* A record smaller than its header: no way to find the next one. */
	put_header(&file, 0);
	put_code_load(&file, 10, 0x1000, 0x20, "kept");
	put_u32(&file, 0);
	put_u32(&file, 8);
	put_u64(&file, 20);
	put_code_load(&file, 30, 0x2000, 0x20, "never read");
	jitdump_add_bytes(dump, file.data, file.length);
	jitdump_summarize(dump, &summary);
	assert_non_null(summary.error);
	assert_string_equal(name_at(dump, 0x1000, 40), "kept");
	assert_null(name_at(dump, 0x2000, 40));
	jitdump_free(dump);

	/* Code larger than its record, an overlong range, no name at all. */
	dump = jitdump_new();
	file.length = 0;
	put_header(&file, 0);
	put_code_load(&file, 10, 0x1000, 0x20, "x");
	memcpy(file.data + 40 + 40, &(uint64_t){0x1000000}, 8); /* code size past the record */
	put_code_load(&file, 10, 0x3000, 0, "");
	put_code_load(&file, 10, 0xffffffffffffff00ull, 0x200, "wraps");
	put_code_load(&file, 10, 0x4000, 0x10, "fine");
	jitdump_add_bytes(dump, file.data, file.length);
	jitdump_summarize(dump, &summary);
	assert_null(summary.error);
	assert_null(name_at(dump, 0x1000, 20));
	assert_null(name_at(dump, 0xffffffffffffff10ull, 20));
	assert_string_equal(name_at(dump, 0x4000, 20), "fine");
	jitdump_free(dump);

	/* Written on a machine of the other byte order, or no jitdump at all. */
	dump = jitdump_new();
	jitdump_add_bytes(dump, &swapped, sizeof(swapped));
	jitdump_add_bytes(dump, file.data + 4, 36);
	jitdump_summarize(dump, &summary);
	assert_false(summary.valid);
	assert_non_null(summary.error);
	jitdump_free(dump);
	dump = jitdump_new();
	jitdump_add_bytes(dump, "00007F148458E6A0 1b0 int32 IndexOf\n", 35);
	jitdump_add_bytes(dump, file.data, 40);
	jitdump_summarize(dump, &summary);
	assert_false(summary.valid);
	jitdump_free(dump);
}

/* A jitdump whose times come from the CPU's counter (flag 1) cannot be
 * matched with samples: every record then counts from the start. */
static void test_counter_times_are_not_used(void **state)
{
	struct bytes file = {0};
	struct jitdump *dump = jitdump_new();
	struct jitdump_summary summary;

	(void)state;
	put_header(&file, 1);
	put_code_load(&file, 1000000, 0x1000, 0x20, "first");
	put_code_load(&file, 2000000, 0x1000, 0x20, "second");
	jitdump_add_bytes(dump, file.data, file.length);
	jitdump_summarize(dump, &summary);
	assert_false(summary.timed);
	assert_string_equal(name_at(dump, 0x1000, 5), "second");
	jitdump_free(dump);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reused_address_named_by_time),
	    cmocka_unit_test(test_bytes_one_at_a_time),
	    cmocka_unit_test(test_clearing_code_keeps_the_rest),
	    cmocka_unit_test(test_record_past_the_end_waits),
	    cmocka_unit_test(test_framing_summary),
	    cmocka_unit_test(test_damaged_files),
	    cmocka_unit_test(test_counter_times_are_not_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
