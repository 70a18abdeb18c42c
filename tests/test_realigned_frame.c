/* realigned_frame on the prologue of OpenSSL's AVX2 SHA-512 body, as
 * Debian's libcrypto.so.3 has it (objdump -d), and on a stack laid out as
 * its loop leaves it. */
#include "realigned_frame.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* From after the pushes to the body's first row:
 *   sub $0x520,%rsp; shl $4,%rdx; and $-0x800,%rsp; lea (%rsi,%rdx,8),%rdx;
 *   add $0x480,%rsp; mov %rdi,0x80(%rsp); mov %rsi,0x88(%rsp);
 *   mov %rdx,0x90(%rsp); mov %rax,0x98(%rsp) */
static const uint8_t sha512_avx2_prologue[] = {
    0x48, 0x81, 0xec, 0x20, 0x05, 0x00, 0x00, 0x48, 0xc1, 0xe2, 0x04, 0x48, 0x81, 0xe4, 0x00, 0xf8,
    0xff, 0xff, 0x48, 0x8d, 0x14, 0xd6, 0x48, 0x81, 0xc4, 0x80, 0x04, 0x00, 0x00, 0x48, 0x89, 0xbc,
    0x24, 0x80, 0x00, 0x00, 0x00, 0x48, 0x89, 0xb4, 0x24, 0x88, 0x00, 0x00, 0x00, 0x48, 0x89, 0x94,
    0x24, 0x90, 0x00, 0x00, 0x00, 0x48, 0x89, 0x84, 0x24, 0x98, 0x00, 0x00, 0x00};

static void test_parses_openssl_prologue(void **state)
{
	struct realigned_frame frame;

	(void)state;
	assert_true(realigned_frame_parse(sha512_avx2_prologue, sizeof(sha512_avx2_prologue), 0x98,
					  &frame));
	assert_int_equal(frame.reserved, 0x520);
	assert_int_equal(frame.alignment, 0x800);
	assert_int_equal(frame.descent, 0x480);
	assert_int_equal(frame.saved_offset, 0x98);
}

static void test_rejects_other_code(void **state)
{
	uint8_t code[sizeof(sha512_avx2_prologue)];
	struct realigned_frame frame;

	(void)state;
	/* Cut before the add. */
	assert_false(realigned_frame_parse(sha512_avx2_prologue, 22, 0x98, &frame));
	/* A mask that is no power of two. */
	memcpy(code, sha512_avx2_prologue, sizeof(code));
	code[15] = 0xf9;
	assert_false(realigned_frame_parse(code, sizeof(code), 0x98, &frame));
	/* A descent as large as the alignment. */
	memcpy(code, sha512_avx2_prologue, sizeof(code));
	code[25] = 0x00, code[26] = 0x08;
	assert_false(realigned_frame_parse(code, sizeof(code), 0x98, &frame));
}

/* The loop 0x300 bytes down from the frame base: the saved stack pointer is
 * still at base + 0x98, whatever rsp - 8 holds. */
static void test_finds_the_entry_stack_pointer(void **state)
{
	enum { ALIGNED = 0x7ff000, WORDS = 1024 };
	static uint64_t words[WORDS];
	const struct stack_copy stack = {
	    .start = ALIGNED, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct realigned_frame frame;
	uint64_t entry_sp, base = ALIGNED + 0x480, entry = base + 0x120;

	(void)state;
	assert_true(realigned_frame_parse(sha512_avx2_prologue, sizeof(sha512_avx2_prologue), 0x98,
					  &frame));
	words[(base + 0x98 - ALIGNED) / 8] = entry;
	assert_true(realigned_frame_entry_sp(&frame, base - 0x300, &stack, &entry_sp));
	assert_int_equal(entry_sp, entry);
	assert_true(realigned_frame_entry_sp(&frame, base, &stack, &entry_sp));
	/* A value below its own slot, or far above the frame, is no entry
	 * stack pointer. */
	words[(base + 0x98 - ALIGNED) / 8] = base;
	assert_false(realigned_frame_entry_sp(&frame, base - 0x300, &stack, &entry_sp));
	words[(base + 0x98 - ALIGNED) / 8] = ALIGNED + 0x10000;
	assert_false(realigned_frame_entry_sp(&frame, base - 0x300, &stack, &entry_sp));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parses_openssl_prologue),
	    cmocka_unit_test(test_rejects_other_code),
	    cmocka_unit_test(test_finds_the_entry_stack_pointer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
