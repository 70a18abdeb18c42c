#include "realigned_frame.h"

#include <string.h>

/* The REX.W 81 /n forms on rsp with a 32-bit immediate: sub, and, add. */
static const uint8_t SUB_RSP[] = {0x48, 0x81, 0xec}, AND_RSP[] = {0x48, 0x81, 0xe4},
		     ADD_RSP[] = {0x48, 0x81, 0xc4};

/* The immediate of the first `opcode` in code[*from, size), past which
 * *from moves. */
static bool find_immediate(const uint8_t *code, size_t size, size_t *from, const uint8_t *opcode,
			   int32_t *immediate)
{
	for (size_t i = *from; i + 7 <= size; i++)
		if (!memcmp(code + i, opcode, 3)) {
			memcpy(immediate, code + i + 3, sizeof(*immediate)); /* little-endian */
			*from = i + 7;
			return true;
		}
	return false;
}

bool realigned_frame_parse(const uint8_t *code, size_t size, uint64_t saved_offset,
			   struct realigned_frame *frame)
{
	size_t at = 0;
	int32_t reserved, mask, descent;

	if (!find_immediate(code, size, &at, SUB_RSP, &reserved) ||
	    !find_immediate(code, size, &at, AND_RSP, &mask) ||
	    !find_immediate(code, size, &at, ADD_RSP, &descent))
		return false;
	/* -A: a power of two from 64 bytes to 64 KiB. */
	if (mask > -64 || mask < -65536 || (-mask & (-mask - 1)) != 0 || reserved <= 0 ||
	    descent < 0 || descent >= -mask || descent % 8 != 0 || saved_offset >= 4096)
		return false;
	*frame = (struct realigned_frame){.reserved = (uint64_t)reserved,
					  .alignment = (uint64_t)-mask,
					  .descent = (uint64_t)descent,
					  .saved_offset = saved_offset};
	return true;
}

/* The prologue pushes the callee-saved registers (six) and may spill a few
 * more before "sub": room for them above the reserved bytes. */
#define PUSHED_BYTES 128

bool realigned_frame_entry_sp(const struct realigned_frame *frame, uint64_t sp,
			      const struct stack_copy *stack, uint64_t *entry_sp)
{
	uint64_t aligned = sp & ~(frame->alignment - 1);
	uint64_t slot = aligned + frame->descent + frame->saved_offset;

	if (!stack_copy_read(stack, slot, entry_sp))
		return false;
	/* The entry stack pointer lies above the slot, within what the
	 * prologue pushed, reserved and lost to the alignment. */
	return *entry_sp > slot &&
	       *entry_sp - aligned <= frame->reserved + frame->alignment + PUSHED_BYTES;
}
