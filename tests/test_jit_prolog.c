/* Unwind info read from JIT code's prologs, on prologs .NET's JIT and
 * crossgen2 write on Linux (copied from tests/dotnet/FramelessCallers' image and
 * System.Private.CoreLib): unwinding a caller's frame with it gives what
 * crossgen2's own unwind info for the same prolog gives. Then through a
 * jitdump, whose code loads keep their prologs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jit_prolog.h"
#include "jitdump.h"
#include "x64_unwind.h"

#include <string.h>

#define STACK	   0x7000u
#define RETURN	   0x55550000u
#define CALLER_RBP 0x9000u

static uint64_t slots[64];
static const struct stack_copy stack = {
    .start = STACK, .bytes = (const uint8_t *)slots, .size = sizeof(slots)};

/* Unwinds a caller's frame standing at `offset` of the code. */
static struct frame_registers unwind_caller(const uint8_t *info, size_t info_size, uint32_t offset,
					    struct frame_registers registers)
{
	struct windows_unwind_code_at at = {info, info_size, offset, NULL, 0, 0, false, false};

	assert_int_equal(x64_unwind_step(&at, false, &stack, &registers), FRAME_STEP_DONE);
	return registers;
}

/* Middle(): push rax; mov esi, 50; call [Spin]: no rbp frame. */
static void test_push_rax_frame(void **state)
{
	static const uint8_t code[] = {0x50, 0xbe, 0x32, 0, 0, 0, 0xff, 0x15, 1, 2, 3, 4};
	uint8_t info[JIT_PROLOG_MAX_INFO];
	size_t size;
	bool osr;
	struct frame_registers caller;

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[1] = RETURN;
	assert_true(jit_prolog_unwind_info(code, sizeof(code), info, &size, &osr));
	caller = unwind_caller(
	    info, size, 11,
	    (struct frame_registers){.ip = 11, .sp = STACK, .bp = CALLER_RBP, .bp_known = true});
	assert_int_equal(caller.ip, RETURN);
	assert_int_equal(caller.sp, STACK + 16);
	assert_int_equal(caller.bp, CALLER_RBP);
	assert_false(osr);
}

/* push rbp; push r15; push rbx; sub rsp, 0x10; lea rbp, [rsp + 0x20]: the
 * same caller as crossgen2's info for it, and with a localloc's stack
 * pointer too (the prolog's frame register finds the frame). */
static void test_pushes_like_crossgen(void **state)
{
	static const uint8_t code[] = {0x55, 0x41, 0x57, 0x53, 0x48, 0x83, 0xec,
				       0x10, 0x48, 0x8d, 0x6c, 0x24, 0x20, 0x33,
				       0xc0, 0xff, 0x15, 0,    0,    0,	   0};
	static const uint8_t crossgen[] = {1 | 3 << 3, 8,	   4, 0,	   8, 2 | 1 << 4,
					   4,	       0 | 3 << 4, 3, 0 | 15 << 4, 1, 0 | 5 << 4};
	uint8_t info[JIT_PROLOG_MAX_INFO];
	size_t size;
	bool osr;
	struct frame_registers ours, theirs,
	    at = {.ip = 0x14, .sp = STACK, .bp = STACK + 0x20, .bp_known = true};

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[0x20 / 8] = CALLER_RBP;
	slots[0x28 / 8] = RETURN;
	assert_true(jit_prolog_unwind_info(code, sizeof(code), info, &size, &osr));
	assert_int_equal(info[3], 5 | 2 << 4); /* rbp, 0x20 above the stack pointer */
	ours = unwind_caller(info, size, 0x14, at);
	theirs = unwind_caller(crossgen, sizeof(crossgen), 0x14, at);
	assert_int_equal(ours.ip, theirs.ip);
	assert_int_equal(ours.sp, theirs.sp);
	assert_int_equal(ours.bp, theirs.bp);
	assert_int_equal(ours.ip, RETURN);
	assert_int_equal(ours.sp, STACK + 0x30);
	assert_int_equal(ours.bp, CALLER_RBP);
	at.sp = STACK - 0x100; /* a localloc below the frame */
	ours = unwind_caller(info, size, 0x14, at);
	assert_int_equal(ours.ip, RETURN);
	assert_int_equal(ours.sp, STACK + 0x30);
}

/* No prolog read: cleared code, a frameless method's body, too little. */
static void test_no_prolog(void **state)
{
	static const uint8_t zeros[16], body[] = {0x33, 0xc0, 0xc3}, cut[] = {0x48, 0x83};
	uint8_t info[JIT_PROLOG_MAX_INFO];
	size_t size;
	bool osr;

	(void)state;
	assert_false(jit_prolog_unwind_info(zeros, sizeof(zeros), info, &size, &osr));
	assert_false(jit_prolog_unwind_info(body, sizeof(body), info, &size, &osr));
	assert_false(jit_prolog_unwind_info(cut, sizeof(cut), info, &size, &osr));
}

/* Worker() of tests/dotnet/OsrWorker, as .NET 10's JIT wrote it: its Tier0
 * code called the patchpoint helper from its loop, which entered its OSR
 * code with the stack pointer on that call's return address and rbp on
 * the Tier0 frame. From a call in the OSR code's body, its info gives the
 * Tier0 frame; that frame, found from its stack pointer, its caller. */
static void test_osr_frame_over_its_tier0_frame(void **state)
{
	/* mov rax, [rbp]; push rax; mov rbp, rsp; vmovsd xmm0, [rbp + 0x20] */
	static const uint8_t osr_code[] = {0x48, 0x8b, 0x45, 0,	   0x50, 0x48, 0x8b,
					   0xec, 0xc5, 0xfb, 0x10, 0x45, 0x20};
	/* push rbp; sub rsp, 0x40; lea rbp, [rsp + 0x40]; xor eax, eax */
	static const uint8_t tier0_code[] = {0x55, 0x48, 0x83, 0xec, 0x40, 0x48,
					     0x8d, 0x6c, 0x24, 0x40, 0x33, 0xc0};
	/* mov r11, [rbp]; push r11; mov rbp, rsp */
	static const uint8_t r11_code[] = {0x4c, 0x8b, 0x5d, 0, 0x41, 0x53, 0x48, 0x8b, 0xec};
	const uint64_t tier0_return = 0x44440080, tier0_sp = STACK + 16;
	uint8_t osr_info[JIT_PROLOG_MAX_INFO], tier0_info[JIT_PROLOG_MAX_INFO];
	size_t osr_size, tier0_size;
	bool osr, tier0_osr;
	struct frame_registers registers = {.ip = 0x30, .sp = STACK, .bp = STACK, .bp_known = true};
	struct windows_unwind_code_at tier0;

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[0] = CALLER_RBP; /* the OSR code's copy of the Tier0 frame's saved rbp */
	slots[1] = tier0_return;
	slots[(tier0_sp - STACK + 0x40) / 8] = CALLER_RBP;
	slots[(tier0_sp - STACK + 0x48) / 8] = RETURN;
	assert_true(jit_prolog_unwind_info(osr_code, sizeof(osr_code), osr_info, &osr_size, &osr));
	assert_true(osr);
	assert_true(jit_prolog_unwind_info(tier0_code, sizeof(tier0_code), tier0_info, &tier0_size,
					   &tier0_osr));
	assert_false(tier0_osr);
	registers = unwind_caller(osr_info, osr_size, 0x30, registers);
	assert_int_equal(registers.ip, tier0_return);
	assert_int_equal(registers.sp, tier0_sp);
	/* rbp is the OSR frame's, nothing of the Tier0 frame's: its frame
	 * register would find it in the wrong place. */
	tier0 = (struct windows_unwind_code_at){.info = tier0_info,
						.info_size = tier0_size,
						.offset = 0x7f,
						.frame_at_stack_pointer = true};
	assert_int_equal(x64_unwind_step(&tier0, false, &stack, &registers), FRAME_STEP_DONE);
	assert_int_equal(registers.ip, RETURN);
	assert_int_equal(registers.sp, tier0_sp + 0x50);
	assert_int_equal(registers.bp, CALLER_RBP);
	/* The same with r11 as the scratch register. */
	assert_true(jit_prolog_unwind_info(r11_code, sizeof(r11_code), osr_info, &osr_size, &osr));
	assert_true(osr);
	registers = unwind_caller(
	    osr_info, osr_size, 0x30,
	    (struct frame_registers){.ip = 0x30, .sp = STACK, .bp = STACK, .bp_known = true});
	assert_int_equal(registers.ip, tier0_return);
}

static void put(uint8_t *out, size_t *length, const void *data, size_t size)
{
	memcpy(out + *length, data, size);
	*length += size;
}

/* A jitdump code load of `code`, at `address` from time 100. */
static size_t code_load(uint8_t *out, size_t length, uint64_t address, const uint8_t *code,
			uint64_t size)
{
	static const char name[] = "int64 [App] Demo.Program::Middle()";
	uint32_t words[4] = {0, (uint32_t)(56 + sizeof(name) + size), 100, 0};
	uint64_t fields[5] = {address, address, size, 1};

	put(out, &length, words, 8);
	put(out, &length, &(uint64_t){100}, 8);
	put(out, &length, (uint32_t[]){4242, 4243}, 8);
	put(out, &length, fields, 32);
	put(out, &length, name, sizeof(name));
	put(out, &length, code, size);
	return length;
}

/* Middle() whole: push rax; mov esi, 50; call [Spin]; inc rax; add rsp, 8;
 * ret. Short enough to be kept whole: a leaf in its epilog unwinds right. */
static const uint8_t middle[] = {0x50, 0xbe, 0x32, 0,	 0,    0,    0xff, 0x15, 1, 2,
				 3,    4,    0x48, 0xff, 0xc0, 0x48, 0x83, 0xc4, 8, 0xc3};

static void test_through_the_jitdump(void **state)
{
	uint32_t header[10] = {0x4A695444, 1, 40, 62, 0, 4242};
	uint8_t file[512], long_method[100];
	size_t length = 0;
	struct jitdump *dump = jitdump_new();
	struct windows_unwind_code_at unwind;
	struct frame_registers registers = {
	    .ip = 0x700f, .sp = STACK, .bp = CALLER_RBP, .bp_known = true};

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[1] = RETURN;
	put(file, &length, header, sizeof(header));
	length = code_load(file, length, 0x7000, middle, sizeof(middle));
	memset(long_method, 0x90, sizeof(long_method));
	memcpy(long_method, middle, 12);
	length = code_load(file, length, 0x8000, long_method, sizeof(long_method));
	jitdump_add_bytes(dump, file, length);
	/* At "add rsp, 8": the epilog is run, not the prolog undone. */
	assert_true(jitdump_unwind_at(dump, 0x700f, 150, &unwind));
	assert_int_equal(unwind.offset, 15);
	assert_int_equal(unwind.info[2], 1); /* one code: push rax */
	assert_int_equal(unwind.code_size, 5);
	assert_int_equal(x64_unwind_step(&unwind, true, &stack, &registers), FRAME_STEP_DONE);
	assert_int_equal(registers.ip, RETURN);
	assert_int_equal(registers.sp, STACK + 16);
	/* A method longer than what is kept: its prolog, not its code. */
	assert_true(jitdump_unwind_at(dump, 0x800b, 150, &unwind));
	assert_null(unwind.code);
	assert_false(jitdump_unwind_at(dump, 0x9000, 150, &unwind));
	jitdump_free(dump);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_push_rax_frame),
	    cmocka_unit_test(test_pushes_like_crossgen),
	    cmocka_unit_test(test_no_prolog),
	    cmocka_unit_test(test_osr_frame_over_its_tier0_frame),
	    cmocka_unit_test(test_through_the_jitdump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
