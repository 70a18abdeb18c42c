/* How much of a stack copy a walk needs (stack_walk_needed_size()), on an
 * rbp chain through .NET code: a copy cut where the walk joins the kernel's
 * callchain walks to the same frames; a callchain that disagrees with the
 * copy, a walk that stops early, or code a later walk may know better (JIT
 * code without its prolog) keeps the whole copy; the slots read are
 * listed; the walk's frames are certain (may stand for the copy) only
 * through code known for good. Then .NET's on-stack replacement code over
 * its Tier0 frame, in the walk and in the frame-pointer mode's repair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stack_walk.h"

#include <string.h>

#define STACK 0x7000u
#define CODE  0x400000u /* .NET code: 0x400000 to 0x500000 */

/* What the code is: precompiled code without unwind info is walked by its
 * frame pointers, and a later walk knows no more of it; JIT code without
 * its prolog is walked so too, but the prolog may come later. */
static enum code_kind code_kind = CODE_PRECOMPILED;

/* Three rbp frames, then a chain that leaves the copy's known code. */
static uint64_t slots[16] = {
    [0] = 0x1234,			     /* the leaf's local at sp */
    [2] = STACK + 0x30, [3] = CODE + 0x100,  /* frame at 0x7010 */
    [6] = STACK + 0x50, [7] = CODE + 0x200,  /* frame at 0x7030 */
    [10] = 0,		[11] = CODE + 0x300, /* frame at 0x7050: rbp 0 ends it */
};

/* The kernel read the same chain, and one frame more above the copy. */
static const uint64_t kernel_chain[] = {CODE, CODE + 0x100, CODE + 0x200, CODE + 0x300,
					CODE + 0x400};

static void look_up(void *context, uint64_t address, struct code_at *code)
{
	(void)context;
	*code = (struct code_at){
	    .kind = address >= CODE && address < CODE + 0x100000 ? code_kind : CODE_UNMAPPED};
	code->provisional = code->kind == CODE_GENERATED;
}

static struct stack_walk_sample sample_of(const uint64_t *chain, size_t chain_length)
{
	return (struct stack_walk_sample){
	    .registers = {.ip = CODE, .sp = STACK, .bp = STACK + 0x10, .bp_known = true},
	    .stack = {.start = STACK, .bytes = (const uint8_t *)slots, .size = sizeof(slots)},
	    .kernel_chain = chain,
	    .kernel_chain_length = chain_length,
	};
}

static size_t walk(const struct stack_walk_sample *sample, uint64_t *frames)
{
	struct stack_walk_end end;

	return stack_walk(STACK_WALK_HYBRID, sample, look_up, NULL, frames, 16, &end);
}

static void test_joins_the_callchain_at_the_first_frame(void **state)
{
	struct stack_walk_sample sample = sample_of(kernel_chain, 5), cut;
	uint64_t whole_frames[16], cut_frames[16];
	struct stack_reads reads;
	size_t count = walk(&sample, whole_frames), needed;
	static struct walked_stack walked;
	bool exact;

	(void)state;
	code_kind = CODE_PRECOMPILED;
	assert_int_equal(count, 5);
	needed = stack_walk_needed_size(STACK_WALK_HYBRID, &sample, look_up, NULL, &reads, &exact,
					&walked);
	assert_int_equal(needed, 0x20); /* the first frame's saved rbp and return address */
	assert_true(exact);
	/* The walk joined the callchain through code known for good: it may
	 * stand for the copy. */
	assert_true(walked.certain);
	assert_int_equal(walked.count, count);
	assert_memory_equal(walked.frames, whole_frames, count * sizeof(*whole_frames));
	cut = sample;
	cut.stack.size = needed;
	assert_int_equal(walk(&cut, cut_frames), count);
	assert_memory_equal(cut_frames, whole_frames, count * sizeof(*whole_frames));
	/* Every slot read is listed, the frames' and the leaf's at sp. */
	assert_int_equal(reads.end, 0x60);
	assert_true(reads.count <= STACK_READS_LISTED);
	for (uint32_t offset = 0x10; offset <= 0x50; offset += 0x20) {
		bool listed = false;

		for (size_t i = 0; i < reads.count; i++)
			listed |= reads.offsets[i] == offset;
		assert_true(listed);
	}
}

static void test_keeps_the_copy_when_nothing_is_sure(void **state)
{
	/* A callchain the copy does not hold: cut, the walk would take it. */
	static const uint64_t other_chain[] = {CODE, CODE + 0x100, CODE + 0x999, CODE + 0x300};
	struct stack_walk_sample sample = sample_of(other_chain, 4);
	struct stack_reads reads;
	static struct walked_stack walked;
	bool exact;

	(void)state;
	code_kind = CODE_PRECOMPILED;
	assert_int_equal(stack_walk_needed_size(STACK_WALK_HYBRID, &sample, look_up, NULL, &reads,
						&exact, &walked),
			 sizeof(slots));
	assert_false(exact);
	/* The whole copy walks to the frames the walk found, and the
	 * callchain ends where they do: they may stand for the copy. */
	assert_true(walked.certain);
	assert_int_equal(walked.count, 4);
	/* DWARF mode stops at the first frame without CFI: nothing is sure. */
	sample = sample_of(kernel_chain, 5);
	assert_int_equal(stack_walk_needed_size(STACK_WALK_DWARF, &sample, look_up, NULL, &reads,
						&exact, &walked),
			 sizeof(slots));
	assert_false(exact);
	assert_false(walked.certain);
	/* JIT code whose prolog the jitdump did not give yet: the replay's
	 * walk may find frameless callers the frame pointers skip. */
	code_kind = CODE_GENERATED;
	assert_int_equal(stack_walk_needed_size(STACK_WALK_HYBRID, &sample, look_up, NULL, &reads,
						&exact, &walked),
			 sizeof(slots));
	assert_false(exact);
	assert_false(walked.certain);
}

/* A frameless leaf's check asks whether the value at sp is code: a value
 * outside the code known may lie in a mapping whose record comes later,
 * where the replay would take it for the leaf's caller; a small number or
 * an address in the copied stack never is. */
static void test_an_unknown_address_leaves_the_walk_uncertain(void **state)
{
	static const uint64_t stack_pointers[] = {0x1234, STACK + 0x40};
	struct stack_walk_sample sample = sample_of(kernel_chain, 5);
	static struct walked_stack walked;
	struct stack_reads reads;
	bool exact;

	(void)state;
	code_kind = CODE_PRECOMPILED;
	slots[0] = 0x7f0000001000; /* a heap's address, or code mapped late */
	stack_walk_needed_size(STACK_WALK_HYBRID, &sample, look_up, NULL, &reads, &exact, &walked);
	assert_int_equal(walked.count, 5);
	assert_false(walked.certain);
	for (size_t i = 0; i < 2; i++) {
		slots[0] = stack_pointers[i];
		stack_walk_needed_size(STACK_WALK_HYBRID, &sample, look_up, NULL, &reads, &exact,
				       &walked);
		assert_true(walked.certain);
	}
	slots[0] = 0x1234;
}

/* arm64 JIT code (frame records of x29 and lr, no unwind info): a leaf that
 * has not pushed its frame record returns to lr, its callers' return
 * addresses come from the records without their pointer-authentication
 * bits; a leaf that has pushed its record is not taken twice. */
static void test_arm64_frame_records_and_lr(void **state)
{
	const uint64_t signature = 0x0031000000000000;
	uint64_t records[8] = {
	    [0] = STACK + 0x10,
	    [1] = CODE + 0x50, /* the leaf's, once pushed */
	    [2] = STACK + 0x30,
	    [3] = (CODE + 0x100) | signature, /* its caller's */
	    [6] = 0,
	    [7] = (CODE + 0x200) | signature, /* the outermost */
	};
	struct stack_walk_sample sample = {
	    .registers = {.ip = CODE,
			  .sp = STACK,
			  .bp = STACK + 0x10,
			  .bp_known = true,
			  .lr = CODE + 0x50,
			  .lr_known = true,
			  .machine = FRAME_MACHINE_AARCH64},
	    .stack = {.start = STACK, .bytes = (const uint8_t *)records, .size = sizeof(records)},
	};
	const uint64_t expected[] = {CODE, CODE + 0x50, CODE + 0x100, CODE + 0x200};
	uint64_t frames[16];

	(void)state;
	code_kind = CODE_GENERATED;
	assert_int_equal(walk(&sample, frames), 4);
	assert_memory_equal(frames, expected, sizeof(expected));
	/* The leaf's record pushed: x29 points at it, lr's value above. */
	sample.registers.bp = STACK;
	assert_int_equal(walk(&sample, frames), 4);
	assert_memory_equal(frames, expected, sizeof(expected));
	/* Without lr (the leaf before its push) the frame records skip the
	 * caller lr holds. */
	sample.registers.bp = STACK + 0x10;
	sample.registers.lr_known = false;
	assert_int_equal(walk(&sample, frames), 3);
	assert_int_equal(frames[1], CODE + 0x100);
}

/* The lookup the walk was given, noting what it is asked. */
struct asked {
	uint64_t addresses[64];
	size_t count;
};

static void look_up_and_note(void *context, uint64_t address, struct code_at *code)
{
	struct asked *asked = context;

	if (asked->count < sizeof(asked->addresses) / sizeof(*asked->addresses))
		asked->addresses[asked->count++] = address;
	look_up(NULL, address, code);
}

/* A caller's return address is asked about once: whether it is code, and
 * how to unwind its frame, from the same answer (a lookup is a hash probe
 * at least, twice per frame of every sample and of its replay). */
static void test_asks_once_per_caller(void **state)
{
	struct stack_walk_sample sample = sample_of(kernel_chain, 5);
	struct asked asked = {0};
	uint64_t frames[16];
	struct stack_walk_end end;

	(void)state;
	code_kind = CODE_PRECOMPILED;
	assert_int_equal(
	    stack_walk(STACK_WALK_HYBRID, &sample, look_up_and_note, &asked, frames, 16, &end), 5);
	for (size_t count = 1; count < 4; count++) {
		size_t times = 0;

		for (size_t i = 0; i < asked.count; i++)
			times += asked.addresses[i] == frames[count] - 1;
		assert_int_equal(times, 1);
	}
}

/* .NET's on-stack replacement: OSR code (its prolog "mov rax, [rbp]; push
 * rax; mov rbp, rsp") running on top of its Tier0 frame ("push rbp; sub
 * rsp, 0x40; lea rbp, [rsp + 0x40]"), entered with the stack pointer on the
 * return address of the Tier0 code's call to the patchpoint helper. rbp
 * points at the OSR code's copy of the Tier0 frame's saved rbp: frame
 * pointers go from the Tier0 frame to the caller's caller. */
#define OSR_CODE   (CODE + 0x1000)
#define TIER0_CODE (CODE + 0x2000)
#define OSR_CALLER (CODE + 0x3000)
#define OSR_ROOT   (CODE + 0x4000)
#define TIER0_RET  (TIER0_CODE + 0x80)
#define CALLER_RBP (STACK + 0x60)
static const uint8_t osr_info[] = {1 | 3 << 3, 8, 2, 5, 8, 3, 5, 0};
static const uint8_t tier0_info[] = {1 | 3 << 3, 10, 3,		 5 | 4 << 4, 10,
				     3,		 5,  2 | 7 << 4, 1,	     5 << 4};
static const uint64_t osr_slots[16] = {
    [0] = CALLER_RBP,  [1] = TIER0_RET,	  /* the OSR frame */
    [10] = CALLER_RBP, [11] = OSR_CALLER, /* the Tier0 frame, 0x40 above its stack pointer */
    [12] = 0,	       [13] = OSR_ROOT,	  /* the caller's frame */
};

static void look_up_osr(void *context, uint64_t address, struct code_at *code)
{
	(void)context;
	look_up(NULL, address, code);
	code->provisional = false;
	if (address >= OSR_CODE && address < OSR_CODE + 0x100)
		code->unwind =
		    (struct windows_unwind_code_at){.info = osr_info,
						    .info_size = sizeof(osr_info),
						    .offset = (uint32_t)(address - OSR_CODE),
						    .osr = true};
	else if (address >= TIER0_CODE && address < TIER0_CODE + 0x100)
		code->unwind =
		    (struct windows_unwind_code_at){.info = tier0_info,
						    .info_size = sizeof(tier0_info),
						    .offset = (uint32_t)(address - TIER0_CODE)};
	else
		return;
	code->kind = CODE_GENERATED;
}

static void test_osr_code_over_its_tier0_frame(void **state)
{
	const struct stack_walk_sample sample = {
	    .registers = {.ip = OSR_CODE + 0x30, .sp = STACK, .bp = STACK, .bp_known = true},
	    .stack = {.start = STACK,
		      .bytes = (const uint8_t *)osr_slots,
		      .size = sizeof(osr_slots)},
	};
	uint64_t frames[16], caller;
	struct stack_walk_end end;

	(void)state;
	code_kind = CODE_PRECOMPILED;
	assert_int_equal(
	    stack_walk(STACK_WALK_HYBRID, &sample, look_up_osr, NULL, frames, 16, &end), 4);
	assert_int_equal(frames[1], TIER0_RET);
	assert_int_equal(frames[2], OSR_CALLER);
	assert_int_equal(frames[3], OSR_ROOT);
	/* The frame-pointer mode's repair, from the stack copy alone. */
	assert_true(stack_walk_osr_leaf_caller(OSR_CODE + 0x30, TIER0_RET, sample.stack.bytes,
					       sample.stack.size, look_up_osr, NULL, &caller));
	assert_int_equal(caller, OSR_CALLER);
	assert_false(stack_walk_osr_leaf_caller(OSR_CODE + 0x30, TIER0_RET + 1, sample.stack.bytes,
						sample.stack.size, look_up_osr, NULL, &caller));
	assert_false(stack_walk_osr_leaf_caller(TIER0_CODE + 0x30, OSR_CALLER, sample.stack.bytes,
						sample.stack.size, look_up_osr, NULL, &caller));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_joins_the_callchain_at_the_first_frame),
	    cmocka_unit_test(test_keeps_the_copy_when_nothing_is_sure),
	    cmocka_unit_test(test_an_unknown_address_leaves_the_walk_uncertain),
	    cmocka_unit_test(test_arm64_frame_records_and_lr),
	    cmocka_unit_test(test_asks_once_per_caller),
	    cmocka_unit_test(test_osr_code_over_its_tier0_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
