/* call_frame_info on a real ELF: this test program's own .eh_frame, which
 * the assembler writes for cfi_example below. Each labelled instruction of
 * cfi_example has a different rule for the caller's frame: the frame that is
 * not set up yet, half set up, kept in rbp, torn down. */
#include "call_frame_info.h"
#include "own_cfi.h"

#include <fcntl.h>
#include <gelf.h>
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

/* One step from `code` with the stack pointer at the copy's start and rbp
 * at its word 2, over the first `size` bytes of the copy. Returns the
 * caller's ip, 0 when the step fails; `caller` gets the caller's
 * registers. */
static uint64_t step_at(void *info, const char *code, size_t size, struct frame_registers *caller)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = size};
	struct frame_registers registers = {.ip = (uint64_t)(uintptr_t)code,
					    .sp = STACK_START,
					    .bp = STACK_START + 16,
					    .bp_known = true};

	if (call_frame_info_step(info, file_address(code), &stack, &registers) != FRAME_STEP_DONE)
		return 0;
	if (caller)
		*caller = registers;
	return registers.ip;
}

static void test_step_follows_each_rule(void **state)
{
	struct frame_registers caller;

	assert_int_equal(step_at(*state, cfi_example, sizeof(words), &caller), 0x1000);
	assert_int_equal(caller.sp, STACK_START + 8);
	assert_int_equal(caller.bp, STACK_START + 16); /* same value */
	assert_int_equal(step_at(*state, cfi_example_pushed, sizeof(words), &caller), 0x1001);
	assert_int_equal(caller.bp, 0x1000); /* restored from its slot */
	assert_int_equal(step_at(*state, cfi_example_popped, sizeof(words), NULL), 0x1000);
	/* The frame kept in rbp: CFA = rbp + 16, the return address at word 3,
	 * the caller's rbp at word 2. */
	assert_int_equal(step_at(*state, cfi_example_framed, sizeof(words), &caller), 0x1003);
	assert_int_equal(caller.sp, STACK_START + 32);
	assert_int_equal(caller.bp, 0x1002);
}

static void test_slot_outside_the_copy_gives_nothing(void **state)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct frame_registers registers = {.sp = STACK_START};

	/* After the push, the slot is word 1: one word does not hold it, nor
	 * 15 bytes, cut inside it; 16 bytes do. */
	assert_int_equal(step_at(*state, cfi_example_pushed, 8, NULL), 0);
	assert_int_equal(step_at(*state, cfi_example_pushed, 15, NULL), 0);
	assert_int_equal(step_at(*state, cfi_example_pushed, 16, NULL), 0x1001);
	assert_int_equal(step_at(*state, cfi_example, 7, NULL), 0);
	assert_int_equal(step_at(*state, cfi_example, 0, NULL), 0);
	/* Addresses no CFI covers. */
	assert_int_equal(call_frame_info_step(*state, 0, &stack, &registers), FRAME_STEP_NO_RULE);
	assert_int_equal(call_frame_info_step(*state, UINT64_MAX - 1, &stack, &registers),
			 FRAME_STEP_NO_RULE);
}

static void test_unknown_frame_pointer_stops_an_rbp_frame(void **state)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct frame_registers registers = {.sp = STACK_START, .bp_known = false};

	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_example_framed), &stack, &registers),
	    FRAME_STEP_FAILED);
}

/* The dynamic loader's _start has no CFI; from there it calls _dl_start,
 * then _dl_init, on the process's first stack: no caller. */
static void test_dynamic_loader_entry_is_outermost(void **state)
{
	struct elf_file *file =
	    elf_file_open(open("/lib64/ld-linux-x86-64.so.2", O_RDONLY | O_CLOEXEC));
	struct call_frame_info *info = call_frame_info_open(file);
	struct stack_copy stack = {0};
	struct frame_registers registers = {.sp = STACK_START, .bp_known = true};
	GElf_Ehdr header;

	(void)state;
	assert_non_null(info);
	assert_non_null(gelf_getehdr(file->elf, &header));
	/* The return address of its call of _dl_start, less one. */
	assert_int_equal(call_frame_info_step(info, header.e_entry + 7, &stack, &registers),
			 FRAME_STEP_OUTERMOST);
	call_frame_info_free(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_step_follows_each_rule, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_unknown_frame_pointer_stops_an_rbp_frame,
					    open_own_cfi, close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_slot_outside_the_copy_gives_nothing, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test(test_dynamic_loader_entry_is_outermost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
