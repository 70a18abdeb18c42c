/* call_frame_info on a real ELF: this test program's own .eh_frame, which
 * the assembler writes for cfi_example below. Each labelled instruction of
 * cfi_example has a different rule for the return address: the frame that is
 * not set up yet, half set up, kept in rbp, torn down. */
#include "call_frame_info.h"

#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

__asm__(".text\n"
	".globl cfi_example\n"
	".type cfi_example, @function\n"
	"cfi_example:\n" /* CFA = rsp + 8 */
	".cfi_startproc\n"
	"	push %rbp\n"
	"cfi_example_pushed:\n" /* CFA = rsp + 16 */
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"cfi_example_framed:\n" /* CFA = rbp + 16 */
	".cfi_def_cfa_register %rbp\n"
	"	nop\n"
	"	pop %rbp\n"
	"cfi_example_popped:\n" /* CFA = rsp + 8 */
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_example, . - cfi_example\n");

extern const char cfi_example[], cfi_example_pushed[], cfi_example_framed[], cfi_example_popped[];

static uint64_t load_bias;

static int take_main_program_bias(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size;
	(void)unused;
	load_bias = info->dlpi_addr; /* the first object is the program */
	return 1;
}

/* The address of `code` in the file, as its CFI names it. */
static uint64_t file_address(const char *code)
{
	dl_iterate_phdr(take_main_program_bias, NULL);
	return (uint64_t)(uintptr_t)code - load_bias;
}

static int open_own_cfi(void **state)
{
	struct elf_file *file = elf_file_open(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));

	assert_non_null(file);
	*state = call_frame_info_open(file);
	assert_non_null(*state);
	return 0;
}

static int close_own_cfi(void **state)
{
	call_frame_info_free(*state);
	return 0;
}

/* A stack copy of 8 words; word i holds 0x1000 + i. */
static const uint64_t stack[8] = {0x1000, 0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x1006, 0x1007};

/* The return address found for `code` in the first `size` bytes of the
 * stack copy; 0 for none. */
static uint64_t return_address_at(void *info, const char *code, size_t size)
{
	uint64_t return_address = 0;

	if (!call_frame_info_return_address(info, file_address(code), (const uint8_t *)stack, size,
					    &return_address))
		return 0;
	return return_address;
}

static void test_return_address_follows_each_rule(void **state)
{
	assert_int_equal(return_address_at(*state, cfi_example, sizeof(stack)), 0x1000);
	assert_int_equal(return_address_at(*state, cfi_example_pushed, sizeof(stack)), 0x1001);
	assert_int_equal(return_address_at(*state, cfi_example_popped, sizeof(stack)), 0x1000);
	/* The frame kept in rbp: the frame-pointer walk already has the caller. */
	assert_int_equal(return_address_at(*state, cfi_example_framed, sizeof(stack)), 0);
}

static void test_slot_outside_the_copy_gives_nothing(void **state)
{
	uint64_t return_address;

	/* After the push, the slot is word 1: one word does not hold it, nor
	 * 15 bytes, cut inside it; 16 bytes do. */
	assert_int_equal(return_address_at(*state, cfi_example_pushed, 8), 0);
	assert_int_equal(return_address_at(*state, cfi_example_pushed, 15), 0);
	assert_int_equal(return_address_at(*state, cfi_example_pushed, 16), 0x1001);
	assert_int_equal(return_address_at(*state, cfi_example, 7), 0);
	assert_int_equal(return_address_at(*state, cfi_example, 0), 0);
	/* Addresses no CFI covers. */
	assert_false(call_frame_info_return_address(*state, 0, (const uint8_t *)stack,
						    sizeof(stack), &return_address));
	assert_false(call_frame_info_return_address(*state, UINT64_MAX - 1, (const uint8_t *)stack,
						    sizeof(stack), &return_address));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_return_address_follows_each_rule, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_slot_outside_the_copy_gives_nothing, open_own_cfi,
					    close_own_cfi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
