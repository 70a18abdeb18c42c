#include "x64_unwind.h"

#include <string.h>

#define INFO_HEADER_SIZE 4
#define FLAG_CHAININFO	 0x4
#define REGISTER_RBP	 5

/* The unwind operations (UWOP_*); 11 is the runtime's own extension on
 * Unix, a frame register set with a 32-bit offset. */
enum unwind_op {
	PUSH_NONVOL = 0,
	ALLOC_LARGE = 1,
	ALLOC_SMALL = 2,
	SET_FPREG = 3,
	SAVE_NONVOL = 4,
	SAVE_NONVOL_FAR = 5,
	SAVE_XMM = 6,
	SAVE_XMM_FAR = 7,
	SAVE_XMM128 = 8,
	SAVE_XMM128_FAR = 9,
	PUSH_MACHFRAME = 10,
	SET_FPREG_LARGE = 11,
};

/* The unwind codes of one UNWIND_INFO: two-byte slots, an operation taking
 * one to three of them. */
struct unwind_codes {
	const uint8_t *slots;
	unsigned count;
	unsigned executed; /* prolog bytes run so far: codes past it do not apply */
	unsigned frame_register, frame_offset; /* the header's; offset unscaled */
};

static uint16_t slot(const struct unwind_codes *codes, unsigned index)
{
	return (uint16_t)(codes->slots[2 * index] | codes->slots[2 * index + 1] << 8);
}

static unsigned op_of(const struct unwind_codes *codes, unsigned index)
{
	return codes->slots[2 * index + 1] & 15;
}

static unsigned info_of(const struct unwind_codes *codes, unsigned index)
{
	return codes->slots[2 * index + 1] >> 4;
}

/* The slots operation `index` takes, 0 for an operation this step cannot
 * follow (a machine frame, a code number past the runtime's). */
static unsigned slots_taken(const struct unwind_codes *codes, unsigned index)
{
	switch (op_of(codes, index)) {
	case PUSH_NONVOL:
	case ALLOC_SMALL:
	case SET_FPREG:
		return 1;
	case ALLOC_LARGE:
		return info_of(codes, index) == 0 ? 2 : 3;
	case SAVE_NONVOL:
	case SAVE_XMM:
	case SAVE_XMM128:
		return 2;
	case SAVE_NONVOL_FAR:
	case SAVE_XMM_FAR:
	case SAVE_XMM128_FAR:
	case SET_FPREG_LARGE:
		return 3;
	default:
		return 0;
	}
}

static uint32_t far_operand(const struct unwind_codes *codes, unsigned index)
{
	return (uint32_t)slot(codes, index + 1) | (uint32_t)slot(codes, index + 2) << 16;
}

static bool applies(const struct unwind_codes *codes, unsigned index)
{
	return codes->slots[2 * index] <= codes->executed;
}

/* The code that sets the frame register (SET_FPREG, or the runtime's large
 * form), or -1 when there is none. */
static int frame_register_code(const struct unwind_codes *codes)
{
	for (unsigned i = 0, taken; i < codes->count; i += taken) {
		if (!(taken = slots_taken(codes, i)) || i + taken > codes->count)
			break;
		if (op_of(codes, i) == SET_FPREG || op_of(codes, i) == SET_FPREG_LARGE)
			return (int)i;
	}
	return -1;
}

/* Undoes the prolog's operations that ran, last first (the order of the
 * codes), then returns through the return address they uncover. */
static enum frame_step undo_prolog(const struct unwind_codes *codes, bool in_prolog,
				   bool at_stack_pointer, const struct stack_copy *stack,
				   struct frame_registers *registers)
{
	struct frame_registers caller = *registers;
	uint64_t frame = caller.sp, value; /* where saved registers' offsets count from */

	int set = codes->frame_register ? frame_register_code(codes) : -1;

	/* Once the prolog has set the frame register, the frame is found from
	 * it: less the offset it was set with (the large form's operand, else
	 * the header's). A frame whose frame register was taken over is found
	 * from the stack pointer, where the prolog left it. */
	if (codes->frame_register && !at_stack_pointer &&
	    (!in_prolog || (set >= 0 && applies(codes, (unsigned)set)))) {
		if (codes->frame_register != REGISTER_RBP || !caller.bp_known)
			return FRAME_STEP_NO_RULE;
		frame = caller.bp - (set >= 0 && op_of(codes, (unsigned)set) == SET_FPREG_LARGE
					 ? (uint64_t)far_operand(codes, (unsigned)set) * 16
					 : codes->frame_offset);
	}
	for (unsigned i = 0, taken; i < codes->count; i += taken) {
		unsigned op = op_of(codes, i), reg = info_of(codes, i);

		if (!(taken = slots_taken(codes, i)) || i + taken > codes->count)
			return FRAME_STEP_NO_RULE;
		if (!applies(codes, i))
			continue;
		switch (op) {
		case PUSH_NONVOL:
			if (!stack_copy_read(stack, caller.sp, &value))
				return FRAME_STEP_FAILED;
			if (reg == REGISTER_RBP) {
				caller.bp = value;
				caller.bp_known = true;
			}
			caller.sp += 8;
			break;
		case ALLOC_SMALL:
			caller.sp += (uint64_t)reg * 8 + 8;
			break;
		case ALLOC_LARGE:
			caller.sp +=
			    reg == 0 ? (uint64_t)slot(codes, i + 1) * 8 : far_operand(codes, i);
			break;
		case SET_FPREG:
		case SET_FPREG_LARGE:
			if (!at_stack_pointer)
				caller.sp = frame;
			break;
		case SAVE_NONVOL:
		case SAVE_NONVOL_FAR:
			if (reg != REGISTER_RBP)
				break;
			if (!stack_copy_read(stack,
					     frame + (op == SAVE_NONVOL
							  ? (uint64_t)slot(codes, i + 1) * 8
							  : far_operand(codes, i)),
					     &caller.bp))
				return FRAME_STEP_FAILED;
			caller.bp_known = true;
			break;
		default: /* xmm registers: not followed */
			break;
		}
	}
	if (!stack_copy_read(stack, caller.sp, &caller.ip))
		return FRAME_STEP_FAILED;
	caller.sp += 8;
	*registers = caller;
	return FRAME_STEP_DONE;
}

static bool is_jump(const uint8_t *code, size_t size)
{
	if (size > 1 && (code[0] & 0xf0) == 0x40) { /* REX */
		code++;
		size--;
	}
	return code[0] == 0xe9 || code[0] == 0xeb ||
	       (size > 1 && code[0] == 0xff && (code[1] & 0x38) == 0x20);
}

/* Reads the epilog that starts at the instruction pointer, as the
 * runtime's unwinder recognizes one: an optional "add rsp, N" or "lea rsp,
 * [rbp + N]", pops, then a return or a jump (a tail call). Runs it
 * on `registers` and returns true when the code is one. */
static bool run_epilog(const uint8_t *code, size_t size, const struct stack_copy *stack,
		       struct frame_registers *registers)
{
	struct frame_registers caller = *registers;
	size_t at = 0;
	uint64_t value;
	int32_t displacement;

	if (size >= 4 && code[0] == 0x48 && code[1] == 0x83 && code[2] == 0xc4) {
		caller.sp += (uint64_t)(int64_t)(int8_t)code[3]; /* add rsp, imm8 */
		at = 4;
	} else if (size >= 7 && code[0] == 0x48 && code[1] == 0x81 && code[2] == 0xc4) {
		memcpy(&displacement, code + 3, 4); /* add rsp, imm32 */
		caller.sp += (uint64_t)(int64_t)displacement;
		at = 7;
	} else if (size >= 4 && code[0] == 0x48 && code[1] == 0x8d && code[2] == 0x65) {
		if (!caller.bp_known) /* lea rsp, [rbp + disp8] */
			return false;
		caller.sp = caller.bp + (uint64_t)(int64_t)(int8_t)code[3];
		at = 4;
	} else if (size >= 7 && code[0] == 0x48 && code[1] == 0x8d && code[2] == 0xa5) {
		if (!caller.bp_known) /* lea rsp, [rbp + disp32] */
			return false;
		memcpy(&displacement, code + 3, 4);
		caller.sp = caller.bp + (uint64_t)(int64_t)displacement;
		at = 7;
	}
	for (;;) {
		bool extended = at < size && code[at] == 0x41; /* pop r8..r15 */
		size_t opcode = at + extended;

		if (opcode >= size || code[opcode] < 0x58 || code[opcode] > 0x5f)
			break;
		if (!stack_copy_read(stack, caller.sp, &value))
			return false;
		if (!extended && code[opcode] == 0x58 + REGISTER_RBP) {
			caller.bp = value;
			caller.bp_known = true;
		}
		caller.sp += 8;
		at = opcode + 1;
	}
	/* ret, or after the epilog's first operation a jump (a tail call):
	 * rel32, rel8, or through memory or a register, REX or not. A jump
	 * alone is more likely a branch of the body (a switch's "jmp rax"). */
	if (at >= size)
		return false;
	if (code[at] != 0xc3 && !(at > 0 && is_jump(code + at, size - at)))
		return false;
	if (!stack_copy_read(stack, caller.sp, &caller.ip))
		return false;
	caller.sp += 8;
	*registers = caller;
	return true;
}

enum frame_step x64_unwind_step(const struct windows_unwind_code_at *at, bool leaf,
				const struct stack_copy *stack, struct frame_registers *registers)
{
	const uint8_t *info = at->info;
	struct unwind_codes codes;
	bool in_prolog;

	if (at->info_size < INFO_HEADER_SIZE || (info[0] & 7) != 1 ||
	    (info[0] >> 3) & FLAG_CHAININFO)
		return FRAME_STEP_NO_RULE;
	codes = (struct unwind_codes){
	    .slots = info + INFO_HEADER_SIZE,
	    .count = info[2],
	    /* A caller's address is inside its call: no prolog operation
	       ends there, so the ones before it count either way. */
	    .executed = at->offset,
	    .frame_register = info[3] & 15,
	    .frame_offset = (info[3] >> 4) * 16u,
	};
	if (at->info_size < INFO_HEADER_SIZE + 2 * (size_t)codes.count)
		return FRAME_STEP_NO_RULE;
	in_prolog = codes.executed < info[1];
	/* Only a leaf can stand in an epilog: a caller stands at its call. */
	if (leaf && !in_prolog && at->code && run_epilog(at->code, at->code_size, stack, registers))
		return FRAME_STEP_DONE;
	return undo_prolog(&codes, in_prolog, at->frame_at_stack_pointer, stack, registers);
}
