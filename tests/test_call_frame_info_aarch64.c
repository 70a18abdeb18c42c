/* call_frame_info on a real arm64 ELF: this test program's own .eh_frame,
 * which the assembler writes for cfi_example below. Each labelled
 * instruction of cfi_example has a different rule for the caller's frame:
 * the frame record not pushed yet (the return address still in lr), pushed,
 * kept in x29, popped. */
#include "call_frame_info.h"
#include "own_cfi.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* Every label global: C reaches them through the GOT, and GNU ld 2.40 gave
 * the local labels of one section the same arm64 GOT entry. */
__asm__(".text\n"
	".globl cfi_example, cfi_example_pushed, cfi_example_framed, cfi_example_popped\n"
	".hidden cfi_example_pushed, cfi_example_framed, cfi_example_popped\n"
	".type cfi_example, %function\n"
	"cfi_example:\n" /* CFA = sp, the return address in lr */
	".cfi_startproc\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"cfi_example_pushed:\n" /* CFA = sp + 16 */
	".cfi_def_cfa_offset 16\n"
	".cfi_offset x29, -16\n"
	".cfi_offset x30, -8\n"
	"	mov x29, sp\n"
	"cfi_example_framed:\n" /* CFA = x29 + 16 */
	".cfi_def_cfa_register x29\n"
	"	nop\n"
	"	ldp x29, x30, [sp], #16\n"
	"cfi_example_popped:\n" /* CFA = sp, the return address in lr */
	".cfi_def_cfa sp, 0\n"
	".cfi_restore x29\n"
	".cfi_restore x30\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_example, . - cfi_example\n"
	/* The same with pointer authentication (-mbranch-protection): lr is
	 * signed first, which the CFI notes (DW_CFA_AARCH64_negate_ra_state). */
	".globl cfi_signed, cfi_signed_signed, cfi_signed_pushed\n"
	".hidden cfi_signed_signed, cfi_signed_pushed\n"
	".type cfi_signed, %function\n"
	"cfi_signed:\n"
	".cfi_startproc\n"
	"	paciasp\n"
	"cfi_signed_signed:\n"
	".cfi_negate_ra_state\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"cfi_signed_pushed:\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset x29, -16\n"
	".cfi_offset x30, -8\n"
	"	ldp x29, x30, [sp], #16\n"
	".cfi_def_cfa sp, 0\n"
	".cfi_restore x29\n"
	".cfi_restore x30\n"
	"	autiasp\n"
	".cfi_negate_ra_state\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_signed, . - cfi_signed\n");

extern const char cfi_example[], cfi_example_pushed[], cfi_example_framed[], cfi_example_popped[],
    cfi_signed_signed[], cfi_signed_pushed[];

/* The return address left in lr by the call. */
enum { LINK_REGISTER = 0x4242 };

/* One step from `code` with the stack pointer at the copy's start, x29 at
 * its word 2 and lr holding LINK_REGISTER, over the first `size` bytes of
 * the copy. Returns the caller's ip, 0 when the step fails; `caller` gets
 * the caller's registers. */
static uint64_t step_at(void *info, const char *code, size_t size, struct frame_registers *caller)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = size};
	struct frame_registers registers = {.machine = FRAME_MACHINE_AARCH64,
					    .ip = (uint64_t)(uintptr_t)code,
					    .sp = STACK_START,
					    .bp = STACK_START + 16,
					    .bp_known = true,
					    .lr = LINK_REGISTER,
					    .lr_known = true};

	if (call_frame_info_step(info, file_address(code), &stack, &registers) != FRAME_STEP_DONE)
		return 0;
	if (caller)
		*caller = registers;
	return registers.ip;
}

static void test_step_follows_each_rule(void **state)
{
	struct frame_registers caller;

	/* Before the push and after the pop: lr, the stack pointer unchanged. */
	assert_int_equal(step_at(*state, cfi_example, sizeof(words), &caller), LINK_REGISTER);
	assert_int_equal(caller.sp, STACK_START);
	assert_int_equal(caller.bp, STACK_START + 16); /* same value */
	assert_false(caller.lr_known);
	assert_int_equal(step_at(*state, cfi_example_popped, sizeof(words), NULL), LINK_REGISTER);
	/* Pushed: x29 at word 0, the return address at word 1. */
	assert_int_equal(step_at(*state, cfi_example_pushed, sizeof(words), &caller), 0x1001);
	assert_int_equal(caller.sp, STACK_START + 16);
	assert_int_equal(caller.bp, 0x1000); /* restored from its slot */
	/* The frame kept in x29: CFA = x29 + 16, the return address at word 3,
	 * the caller's x29 at word 2. */
	assert_int_equal(step_at(*state, cfi_example_framed, sizeof(words), &caller), 0x1003);
	assert_int_equal(caller.sp, STACK_START + 32);
	assert_int_equal(caller.bp, 0x1002);
}

/* A return address signed with pointer authentication comes back without
 * its signature; an x86-64 walk cannot step through arm64 CFI. */
static void test_signed_return_address_and_machine(void **state)
{
	static const uint64_t signed_words[2] = {0x1000, 0x002e000000401234};
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)signed_words, .size = 16};
	struct frame_registers registers = {.machine = FRAME_MACHINE_AARCH64, .sp = STACK_START};

	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_example_pushed), &stack, &registers),
	    FRAME_STEP_DONE);
	assert_int_equal(registers.ip, 0x401234);
	/* Code that signs its return address, as its CFI says: the signed lr
	 * in the register, then in its slot. */
	registers = (struct frame_registers){.machine = FRAME_MACHINE_AARCH64,
					     .sp = STACK_START,
					     .lr = signed_words[1],
					     .lr_known = true};
	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_signed_signed), &stack, &registers),
	    FRAME_STEP_DONE);
	assert_int_equal(registers.ip, 0x401234);
	registers = (struct frame_registers){.machine = FRAME_MACHINE_AARCH64, .sp = STACK_START};
	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_signed_pushed), &stack, &registers),
	    FRAME_STEP_DONE);
	assert_int_equal(registers.ip, 0x401234);
	assert_int_equal(registers.sp, STACK_START + 16);
	registers = (struct frame_registers){.machine = FRAME_MACHINE_X86_64, .sp = STACK_START};
	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_example_pushed), &stack, &registers),
	    FRAME_STEP_FAILED);
}

/* Without lr (a caller's frame), the leaf's rule gives nothing. */
static void test_unknown_link_register(void **state)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct frame_registers registers = {.machine = FRAME_MACHINE_AARCH64, .sp = STACK_START};

	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_example), &stack, &registers),
	    FRAME_STEP_FAILED);
}

static void test_slot_outside_the_copy_gives_nothing(void **state)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct frame_registers registers = {.machine = FRAME_MACHINE_AARCH64, .sp = STACK_START};

	/* After the push, the slot is word 1: one word does not hold it, nor
	 * 15 bytes, cut inside it; 16 bytes do. */
	assert_int_equal(step_at(*state, cfi_example_pushed, 8, NULL), 0);
	assert_int_equal(step_at(*state, cfi_example_pushed, 15, NULL), 0);
	assert_int_equal(step_at(*state, cfi_example_pushed, 16, NULL), 0x1001);
	assert_int_equal(step_at(*state, cfi_example_framed, 31, NULL), 0);
	/* Addresses no CFI covers. */
	assert_int_equal(call_frame_info_step(*state, 0, &stack, &registers), FRAME_STEP_NO_RULE);
	assert_int_equal(call_frame_info_step(*state, UINT64_MAX - 1, &stack, &registers),
			 FRAME_STEP_NO_RULE);
}

static void test_unknown_frame_pointer_stops_an_x29_frame(void **state)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct frame_registers registers = {
	    .machine = FRAME_MACHINE_AARCH64, .sp = STACK_START, .bp_known = false};

	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_example_framed), &stack, &registers),
	    FRAME_STEP_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_step_follows_each_rule, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_unknown_frame_pointer_stops_an_x29_frame,
					    open_own_cfi, close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_signed_return_address_and_machine, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_unknown_link_register, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_slot_outside_the_copy_gives_nothing, open_own_cfi,
					    close_own_cfi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
