/* Unwinding through precompiled .NET code with its Windows x64 unwind info,
 * on prologs and epilogs as crossgen2 lays them out for Linux (copied from
 * System.Private.CoreLib and a test app's image: "push rax" frames, rbp
 * pushed first and pointed at its slot, a frame register with an offset),
 * at a method's start, in its prolog, body and epilog, and on damaged
 * info. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "x64_unwind.h"

#include <string.h>

#define STACK	      0x7000u
#define RETURN	      0x55550000u /* the caller's return address */
#define CALLER_RBP    0x9000u
#define PUSH_NONVOL   0
#define ALLOC_SMALL   2
#define SET_FPREG     3
#define PUSH_MACHINE  10
#define FPREG_LARGE   11
#define REGISTER_RBX  3
#define REGISTER_RBP  5
#define REGISTER_R15  15
#define FLAGS_HANDLER (3u << 3) /* as every .NET method has */

static uint64_t slots[64];
static const struct stack_copy stack = {
    .start = STACK, .bytes = (const uint8_t *)slots, .size = sizeof(slots)};

static void put(uint64_t address, uint64_t value)
{
	slots[(address - STACK) / 8] = value;
}

/* An UNWIND_INFO: header, then each code as (prolog offset, op, info). */
struct info {
	uint8_t bytes[64];
	size_t size;
};

static struct info info_of(uint8_t prolog, uint8_t frame, size_t count, const uint8_t codes[][3])
{
	struct info info = {{1 | FLAGS_HANDLER, prolog, (uint8_t)count, frame}, 4};

	for (size_t i = 0; i < count; i++) {
		info.bytes[info.size++] = codes[i][0];
		info.bytes[info.size++] = (uint8_t)(codes[i][1] | codes[i][2] << 4);
	}
	return info;
}

static enum frame_step unwind(const struct info *info, uint32_t offset, bool leaf,
			      const uint8_t *code, size_t code_size,
			      struct frame_registers *registers)
{
	struct windows_unwind_code_at at = {info->bytes, info->size, offset, code,
					    code_size,	 0,	     false,  false};

	return x64_unwind_step(&at, leaf, &stack, registers);
}

static void assert_caller(const struct frame_registers *registers, uint64_t sp, uint64_t bp)
{
	assert_int_equal(registers->ip, RETURN);
	assert_int_equal(registers->sp, sp);
	assert_int_equal(registers->bp, bp);
	assert_true(registers->bp_known);
}

/* Middle() of tests/dotnet/FramelessCallers: push rax; mov esi, 50; call Spin;
 * inc rax; add rsp, 8; ret. rbp is never touched: it stays the caller's. */
static void test_frame_without_rbp(void **state)
{
	const uint8_t codes[][3] = {{1, ALLOC_SMALL, 0}};
	struct info info = info_of(1, 0, 1, codes);
	struct frame_registers registers;

	(void)state;
	memset(slots, 0, sizeof(slots));
	put(STACK, 0x1234); /* rax, pushed to align */
	put(STACK + 8, RETURN);
	registers =
	    (struct frame_registers){.ip = 0x10, .sp = STACK, .bp = CALLER_RBP, .bp_known = true};
	/* A caller's frame: the address is in "call Spin" (offset 6..11). */
	assert_int_equal(unwind(&info, 10, false, NULL, 0, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 16, CALLER_RBP);
	/* The leaf at its first instruction: nothing pushed yet. */
	registers =
	    (struct frame_registers){.ip = 0, .sp = STACK + 8, .bp = CALLER_RBP, .bp_known = true};
	assert_int_equal(unwind(&info, 0, true, NULL, 0, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 16, CALLER_RBP);
}

/* push rbp; push r15; push rbx; sub rsp, 0x10; lea rbp, [rsp + 0x20];
 * its unwind info names no frame register: the stack pointer says it all. */
static const uint8_t pushes[][3] = {{8, ALLOC_SMALL, 1},
				    {4, PUSH_NONVOL, REGISTER_RBX},
				    {3, PUSH_NONVOL, REGISTER_R15},
				    {1, PUSH_NONVOL, REGISTER_RBP}};

static void fill_pushed_frame(void)
{
	memset(slots, 0, sizeof(slots));
	put(STACK + 0x10, 0xb); /* rbx */
	put(STACK + 0x18, 0xf); /* r15 */
	put(STACK + 0x20, CALLER_RBP);
	put(STACK + 0x28, RETURN);
}

static void test_body_and_prolog(void **state)
{
	struct info info = info_of(8, 0, 4, pushes);
	struct frame_registers registers;

	(void)state;
	fill_pushed_frame();
	registers =
	    (struct frame_registers){.ip = 0x40, .sp = STACK, .bp = STACK + 0x20, .bp_known = true};
	assert_int_equal(unwind(&info, 0x40, true, NULL, 0, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x30, CALLER_RBP);
	/* In the prolog after "push rbp; push r15": only those two are undone. */
	registers = (struct frame_registers){
	    .ip = 3, .sp = STACK + 0x18, .bp = CALLER_RBP, .bp_known = true};
	assert_int_equal(unwind(&info, 3, true, NULL, 0, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x30, CALLER_RBP);
}

static void test_epilogs(void **state)
{
	static const uint8_t whole[] = {0x48, 0x83, 0xc4, 0x10, 0x5b, 0x41, 0x5f, 0x5d, 0xc3};
	static const uint8_t tail_call[] = {0x5b, 0x41, 0x5f, 0x5d, 0x48, 0xff, 0xe0};
	static const uint8_t branch[] = {0xeb, 0x05, 0x90};
	struct info info = info_of(8, 0, 4, pushes);
	struct frame_registers registers;

	(void)state;
	fill_pushed_frame();
	/* At "add rsp, 0x10": the whole frame is still there. */
	registers =
	    (struct frame_registers){.ip = 0x80, .sp = STACK, .bp = STACK + 0x20, .bp_known = true};
	assert_int_equal(unwind(&info, 0x80, true, whole, sizeof(whole), &registers),
			 FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x30, CALLER_RBP);
	/* At "pop rbp; ret": rbx and r15 are popped already, rbp holds rbx's
	 * value; undoing the prolog would read past the return address. */
	registers =
	    (struct frame_registers){.ip = 0x87, .sp = STACK + 0x20, .bp = 0xb, .bp_known = true};
	assert_int_equal(unwind(&info, 0x87, true, whole + 7, 2, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x30, CALLER_RBP);
	/* A tail call: the pops, then "jmp rax". */
	registers = (struct frame_registers){
	    .ip = 0x80, .sp = STACK + 0x10, .bp = STACK + 0x20, .bp_known = true};
	assert_int_equal(unwind(&info, 0x80, true, tail_call, sizeof(tail_call), &registers),
			 FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x30, CALLER_RBP);
	/* A branch of the body is no epilog: the prolog is undone. */
	registers =
	    (struct frame_registers){.ip = 0x80, .sp = STACK, .bp = STACK + 0x20, .bp_known = true};
	assert_int_equal(unwind(&info, 0x80, true, branch, sizeof(branch), &registers),
			 FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x30, CALLER_RBP);
}

/* push rbp; sub rsp, 0x40; lea rbp, [rsp + 0x20], then a localloc moved the
 * stack pointer: the frame is found from rbp. */
static void test_frame_register(void **state)
{
	const uint8_t codes[][3] = {
	    {10, SET_FPREG, 0}, {5, ALLOC_SMALL, 7}, {1, PUSH_NONVOL, REGISTER_RBP}};
	const uint8_t large[][3] = {{10, FPREG_LARGE, 0},
				    {2, 0, 0},
				    {0, 0, 0},
				    {5, ALLOC_SMALL, 7},
				    {1, PUSH_NONVOL, REGISTER_RBP}};
	struct info info = info_of(10, REGISTER_RBP | 2 << 4, 3, codes);
	struct info large_info = info_of(10, REGISTER_RBP | 15 << 4, 5, large);
	struct frame_registers registers;

	(void)state;
	memset(slots, 0, sizeof(slots));
	put(STACK + 0x140, CALLER_RBP);
	put(STACK + 0x148, RETURN);
	registers = (struct frame_registers){
	    .ip = 0x30, .sp = STACK, .bp = STACK + 0x120, .bp_known = true};
	assert_int_equal(unwind(&info, 0x30, false, NULL, 0, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x150, CALLER_RBP);
	registers = (struct frame_registers){
	    .ip = 0x30, .sp = STACK, .bp = STACK + 0x120, .bp_known = true};
	assert_int_equal(unwind(&large_info, 0x30, false, NULL, 0, &registers), FRAME_STEP_DONE);
	assert_caller(&registers, STACK + 0x150, CALLER_RBP);
	/* Without rbp's value the frame cannot be found. */
	registers = (struct frame_registers){.ip = 0x30, .sp = STACK, .bp = 0, .bp_known = false};
	assert_int_equal(unwind(&info, 0x30, false, NULL, 0, &registers), FRAME_STEP_NO_RULE);
}

static void test_damaged_info(void **state)
{
	const uint8_t machine_frame[][3] = {{1, PUSH_MACHINE, 0}};
	const uint8_t huge[][3] = {{4, 1, 1}, {0, 0, 0}, {0, 0x10, 0}}; /* alloc 256 MB */
	struct info info = info_of(8, 0, 4, pushes);
	struct frame_registers registers, before;

	(void)state;
	fill_pushed_frame();
	before = registers =
	    (struct frame_registers){.ip = 0x40, .sp = STACK, .bp = STACK + 0x20, .bp_known = true};
	info.bytes[0] = 2 | FLAGS_HANDLER; /* version 2 */
	assert_int_equal(unwind(&info, 0x40, true, NULL, 0, &registers), FRAME_STEP_NO_RULE);
	info.bytes[0] = 1 | 4u << 3; /* chained to another function's info */
	assert_int_equal(unwind(&info, 0x40, true, NULL, 0, &registers), FRAME_STEP_NO_RULE);
	info = info_of(8, 0, 4, pushes);
	info.size = 9; /* the codes cut off */
	assert_int_equal(unwind(&info, 0x40, true, NULL, 0, &registers), FRAME_STEP_NO_RULE);
	info = info_of(1, 0, 1, machine_frame);
	assert_int_equal(unwind(&info, 0x40, true, NULL, 0, &registers), FRAME_STEP_NO_RULE);
	info = info_of(4, 0, 3, huge); /* the return address past the copy */
	assert_int_equal(unwind(&info, 0x40, true, NULL, 0, &registers), FRAME_STEP_FAILED);
	assert_memory_equal(&registers, &before, sizeof(before));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_without_rbp), cmocka_unit_test(test_body_and_prolog),
	    cmocka_unit_test(test_epilogs),	      cmocka_unit_test(test_frame_register),
	    cmocka_unit_test(test_damaged_info),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
