#include "jit_prolog.h"

#include <string.h>

#define MAX_CODES     ((JIT_PROLOG_MAX_INFO - 4) / 2)
#define REGISTER_RBP  5
#define PUSH_NONVOL   0
#define ALLOC_LARGE   1
#define ALLOC_SMALL   2
#define SET_FPREG     3
#define FPREG_LARGE   11
#define FLAGS_HANDLER (3u << 3)

/* The prolog's operations in their order, as unwind codes (2-byte slots). */
struct prolog {
	uint16_t slots[MAX_CODES];
	unsigned count;
	uint8_t frame; /* the header's frame register and scaled offset */
};

static bool add_code(struct prolog *prolog, size_t end, unsigned op, unsigned info)
{
	if (prolog->count >= MAX_CODES || end > 255)
		return false;
	prolog->slots[prolog->count++] = (uint16_t)(end | (op | info << 4) << 8);
	return true;
}

/* An operation taking extra slots: they follow its code in the info, so
 * here, where the order is reversed at the end, they come before it. */
static bool add_far_code(struct prolog *prolog, size_t end, unsigned op, unsigned info,
			 uint32_t operand, bool two_slots)
{
	if (prolog->count + 3 > MAX_CODES)
		return false;
	if (two_slots)
		prolog->slots[prolog->count++] = (uint16_t)(operand >> 16);
	prolog->slots[prolog->count++] = (uint16_t)operand;
	return add_code(prolog, end, op, info);
}

static bool add_allocation(struct prolog *prolog, size_t end, uint32_t size)
{
	if (size == 0 || size % 8)
		return false;
	if (size <= 128)
		return add_code(prolog, end, ALLOC_SMALL, size / 8 - 1);
	if (size / 8 <= 0xffff)
		return add_far_code(prolog, end, ALLOC_LARGE, 0, size / 8, false);
	return add_far_code(prolog, end, ALLOC_LARGE, 1, size, true);
}

static bool set_frame_register(struct prolog *prolog, size_t end, uint32_t offset)
{
	if (offset % 16)
		return false;
	if (offset <= 240) {
		prolog->frame = (uint8_t)(REGISTER_RBP | (offset / 16) << 4);
		return add_code(prolog, end, SET_FPREG, 0);
	}
	prolog->frame = REGISTER_RBP | 15 << 4;
	return add_far_code(prolog, end, FPREG_LARGE, 0, offset / 16, true);
}

static uint32_t read_u32(const uint8_t *bytes)
{
	uint32_t value;

	memcpy(&value, bytes, sizeof(value));
	return value;
}

/* Reads one prolog instruction at `code` and adds its operation; returns
 * its length, 0 when it is no prolog instruction. */
static size_t read_instruction(const uint8_t *code, size_t size, size_t at, struct prolog *prolog)
{
	const uint8_t *c = code + at;
	size_t left = size - at;

	if (left >= 1 && c[0] >= 0x50 && c[0] <= 0x57) /* push r (rax: 8 bytes of frame) */
		return add_code(prolog, at + 1, PUSH_NONVOL, c[0] - 0x50u) ? 1 : 0;
	if (left >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) /* push r8..r15 */
		return add_code(prolog, at + 2, PUSH_NONVOL, c[1] - 0x50u + 8) ? 2 : 0;
	if (left >= 3 && c[0] == 0xc5 && c[1] == 0xf8 && c[2] == 0x77) /* vzeroupper */
		return 3;
	if (left >= 4 && c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xec && c[3] < 0x80)
		return add_allocation(prolog, at + 4, c[3]) ? 4 : 0; /* sub rsp, imm8 */
	if (left >= 7 && c[0] == 0x48 && c[1] == 0x81 && c[2] == 0xec)
		return add_allocation(prolog, at + 7, read_u32(c + 3)) ? 7 : 0; /* sub rsp, imm32 */
	if (left >= 3 && c[0] == 0x48 &&
	    ((c[1] == 0x8b && c[2] == 0xec) || (c[1] == 0x89 && c[2] == 0xe5)))
		return set_frame_register(prolog, at + 3, 0) ? 3 : 0; /* mov rbp, rsp */
	if (left >= 5 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x6c && c[3] == 0x24)
		return set_frame_register(prolog, at + 5, c[4]) ? 5
								: 0; /* lea rbp, [rsp + disp8] */
	if (left >= 8 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0xac && c[3] == 0x24)
		return set_frame_register(prolog, at + 8, read_u32(c + 4)) ? 8 : 0;
	return 0;
}

/* The length of the on-stack replacement's first two instructions at the
 * start of `code`, "mov r, [rbp]; push r" (the Tier0 frame's saved rbp,
 * pushed again), or 0. */
static size_t osr_preamble(const uint8_t *code, size_t size)
{
	bool extended = size >= 1 && code[0] == 0x4c; /* r8..r15 */
	unsigned reg;

	if (size < 5 || (code[0] != 0x48 && !extended) || code[1] != 0x8b ||
	    (code[2] & 0xc7) != 0x45 || code[3] != 0)
		return 0;
	reg = (code[2] >> 3 & 7u) + (extended ? 8 : 0);
	if (!extended && code[4] == 0x50 + reg)
		return 5;
	if (extended && size >= 6 && code[4] == 0x41 && code[5] == 0x50 + reg - 8)
		return 6;
	return 0;
}

bool jit_prolog_unwind_info(const uint8_t *code, size_t size, uint8_t info[JIT_PROLOG_MAX_INFO],
			    size_t *info_size, bool *osr)
{
	struct prolog prolog = {0};
	size_t at = osr_preamble(code, size), length;

	/* The copy of the saved rbp is one more slot of the frame: undone as
	 * the push it is (of a scratch register), it uncovers the slot of the
	 * transition's return address, into the Tier0 code. */
	*osr = at > 0;
	if (*osr &&
	    !add_code(&prolog, at, PUSH_NONVOL, at == 5 ? code[4] - 0x50u : code[5] - 0x50u + 8))
		return false;
	while (at < size && (length = read_instruction(code, size, at, &prolog)))
		at += length;
	/* Nothing read: a frameless method, or a prolog of another shape (a
	 * stack probe, code cleared in a capture's copy). Either way no info
	 * is better than a wrong one. */
	if (prolog.count == 0)
		return false;
	info[0] = 1 | FLAGS_HANDLER;
	info[1] = (uint8_t)(prolog.slots[prolog.count - 1] & 0xff); /* the last one's end */
	info[2] = (uint8_t)prolog.count;
	info[3] = prolog.frame;
	/* The codes go last operation first. */
	for (unsigned i = 0; i < prolog.count; i++) {
		uint16_t slot = prolog.slots[prolog.count - 1 - i];

		info[4 + 2 * i] = (uint8_t)slot;
		info[5 + 2 * i] = (uint8_t)(slot >> 8);
	}
	*info_size = 4 + 2 * (size_t)prolog.count;
	return true;
}
