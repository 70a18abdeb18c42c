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

/* One rule of each other kind, one labelled instruction each:
 *   in_rbx:      CFA = rbx + 16, the return address at CFA - 8;
 *   by_deref:    CFA = [rsp + 8] + 8 (DW_CFA_def_cfa_expression: DW_OP_breg7
 *                8, DW_OP_deref, DW_OP_plus_uconst 8), OpenSSL's form;
 *   ra_in_rax:   the return address in rax (DW_CFA_register 16, 0);
 *   rbx_by_expr: CFA = rsp + 8, rbx's slot by DW_CFA_expression (DW_OP_breg7
 *                16) and r12's value by DW_CFA_val_expression (DW_OP_breg7
 *                24);
 *   unknown_op:  CFA by an expression with DW_OP_GNU_push_tls_address, which
 *                no step follows;
 *   high_column: CFA = register 50 + 16 (DW_CFA_def_cfa 50, 16), a column
 *                past those a step tracks, which libdw gives as
 *                DW_OP_bregx in memory of the row it frees;
 *   signal:      a signal frame ('S'): CFA = rsp + 8, the caller's rip from
 *                its slot at CFA (DW_CFA_expression 16: DW_OP_breg7 8). */
__asm__(".text\n"
	".globl cfi_rules\n"
	".type cfi_rules, @function\n"
	"cfi_rules:\n"
	".cfi_startproc\n"
	"	nop\n"
	"cfi_rules_in_rbx:\n"
	".cfi_def_cfa %rbx, 16\n"
	"	nop\n"
	"cfi_rules_by_deref:\n"
	".cfi_escape 0x0f, 0x05, 0x77, 0x08, 0x06, 0x23, 0x08\n"
	"	nop\n"
	"cfi_rules_ra_in_rax:\n"
	".cfi_def_cfa %rsp, 8\n"
	".cfi_register 16, 0\n"
	"	nop\n"
	"cfi_rules_rbx_by_expression:\n"
	".cfi_offset 16, -8\n"
	".cfi_escape 0x10, 0x03, 0x02, 0x77, 0x10\n"
	".cfi_escape 0x16, 0x0c, 0x02, 0x77, 0x18\n"
	"	nop\n"
	"cfi_rules_unknown_op:\n"
	".cfi_escape 0x0f, 0x01, 0xe0\n"
	"	nop\n"
	"cfi_rules_high_column:\n"
	".cfi_def_cfa 50, 16\n"
	"	nop\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_rules, . - cfi_rules\n"
	"	nop\n"
	".globl cfi_signal\n"
	".type cfi_signal, @function\n"
	"cfi_signal:\n"
	".cfi_startproc\n"
	".cfi_signal_frame\n"
	".cfi_escape 0x10, 0x10, 0x02, 0x77, 0x08\n"
	"	nop\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfi_signal, . - cfi_signal\n");

extern const char cfi_rules_in_rbx[], cfi_rules_by_deref[], cfi_rules_ra_in_rax[],
    cfi_rules_rbx_by_expression[], cfi_rules_unknown_op[], cfi_rules_high_column[], cfi_signal[];

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

/* A sample's registers: sp at the copy's start, every general register
 * known and holding 0x2000 + its number, rbx an address of the copy. */
static struct general_registers general;

static struct frame_registers sample_at(const char *code)
{
	general.known = 0xffff & ~(1U << 6 | 1U << 7);
	for (unsigned regno = 0; regno < 16; regno++)
		general.values[regno] = 0x2000 + regno;
	general.values[3] = STACK_START + 16;
	return (struct frame_registers){.ip = (uint64_t)(uintptr_t)code,
					.sp = STACK_START,
					.bp = STACK_START + 16,
					.bp_known = true,
					.interrupted = true,
					.general = &general};
}

static enum frame_step step_rules(void *info, const char *code, struct frame_registers *registers)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};

	*registers = sample_at(code);
	return call_frame_info_step(info, file_address(code), &stack, registers);
}

static void test_step_follows_other_rules(void **state)
{
	struct frame_registers caller;

	/* CFA = rbx + 16 = word 4; the return address at word 3. */
	assert_int_equal(step_rules(*state, cfi_rules_in_rbx, &caller), FRAME_STEP_DONE);
	assert_int_equal(caller.sp, STACK_START + 32);
	assert_int_equal(caller.ip, 0x1003);
	/* rbx the callee's, known: the CFI leaves it alone. */
	assert_true(general.known & 1U << 3);
	assert_int_equal(general.values[3], STACK_START + 16);
	/* CFA = [rsp + 8] + 8 = 0x1001 + 8: outside the copy, where the
	 * return address is: the expression is followed, the slot is not. */
	assert_int_equal(step_rules(*state, cfi_rules_by_deref, &caller), FRAME_STEP_FAILED);
	assert_int_equal(step_rules(*state, cfi_rules_ra_in_rax, &caller), FRAME_STEP_DONE);
	assert_int_equal(caller.ip, 0x2000);
	assert_int_equal(caller.sp, STACK_START + 8);
	/* rbx from the slot at rsp + 16 (word 2), r12 the value rsp + 24. */
	assert_int_equal(step_rules(*state, cfi_rules_rbx_by_expression, &caller), FRAME_STEP_DONE);
	assert_int_equal(caller.ip, 0x1000);
	assert_int_equal(general.values[3], 0x1002);
	assert_int_equal(general.values[12], STACK_START + 24);
	assert_int_equal(step_rules(*state, cfi_rules_unknown_op, &caller), FRAME_STEP_FAILED);
	/* No register past 32 is known: no CFA (under ASan, a read of the
	 * freed row would stop the test). Twice: the second from the cache. */
	assert_int_equal(step_rules(*state, cfi_rules_high_column, &caller), FRAME_STEP_FAILED);
	assert_int_equal(step_rules(*state, cfi_rules_high_column, &caller), FRAME_STEP_FAILED);
}

static void test_rbx_unknown_stops_a_frame_kept_there(void **state)
{
	struct stack_copy stack = {
	    .start = STACK_START, .bytes = (const uint8_t *)words, .size = sizeof(words)};
	struct frame_registers registers = sample_at(cfi_rules_in_rbx);

	general.known &= ~(1U << 3);
	assert_int_equal(
	    call_frame_info_step(*state, file_address(cfi_rules_in_rbx), &stack, &registers),
	    FRAME_STEP_FAILED);
}

/* The caller of a signal frame is the state it interrupted: its exact ip. */
static void test_signal_frame_gives_the_interrupted_state(void **state)
{
	struct frame_registers caller;

	assert_int_equal(step_rules(*state, cfi_signal + 1, &caller), FRAME_STEP_DONE);
	assert_int_equal(caller.ip, 0x1001);
	assert_true(caller.interrupted);
	assert_int_equal(step_rules(*state, cfi_rules_in_rbx, &caller), FRAME_STEP_DONE);
	assert_false(caller.interrupted);
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
	    cmocka_unit_test_setup_teardown(test_step_follows_other_rules, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_rbx_unknown_stops_a_frame_kept_there, open_own_cfi,
					    close_own_cfi),
	    cmocka_unit_test_setup_teardown(test_signal_frame_gives_the_interrupted_state,
					    open_own_cfi, close_own_cfi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
