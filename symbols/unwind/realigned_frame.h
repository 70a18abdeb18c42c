/* OpenSSL's hand-written bodies that realign their stack frame (the AVX2
 * SHA-256 and SHA-512 ones of its perlasm, and its AES-CBC with SHA-256
 * stitch). Having kept the entry stack pointer in rax and pushed the
 * callee-saved registers, their prologue
 *
 *     sub  $S, %rsp
 *     and  $-A, %rsp      A a power of two
 *     add  $D, %rsp       D below A
 *     ...
 *     mov  %rax, OFF(%rsp)
 *
 * sets a frame base D above an A-aligned address and saves the entry stack
 * pointer OFF above it: their CFI gives the CFA as [rsp + OFF] + 8. Their
 * loop then moves rsp down from the frame base, by up to D bytes, moving a
 * copy of the saved stack pointer along, and the CFI follows that copy:
 * [rsp + N] + 8, with N as low as -8, in the red zone below the stack
 * pointer. A perf sample's stack copy starts at the stack pointer and
 * never holds it. Wherever rsp is in that loop, the frame base is
 * align_down(rsp, A) + D, and the first copy is still OFF above it:
 * written once by the prologue, read by the epilogue. */
#ifndef PROFCPU_REALIGNED_FRAME_H
#define PROFCPU_REALIGNED_FRAME_H

#include "stack_copy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct realigned_frame {
	uint64_t reserved;     /* S */
	uint64_t alignment;    /* A */
	uint64_t descent;      /* D */
	uint64_t saved_offset; /* OFF */
};

/* The prologue's S, A and D, from `code`: the bytes from where the CFA is
 * rax plus 8 (after "mov %rsp, %rax") to the first row that gives it by
 * [rsp + OFF] (`saved_offset`). False when they are not there. */
bool realigned_frame_parse(const uint8_t *code, size_t size, uint64_t saved_offset,
			   struct realigned_frame *frame);

/* The entry stack pointer of the frame whose loop has the stack pointer at
 * `sp`, read from its first copy in `stack`; false when the slot is outside
 * the copy or the value cannot be the frame's (below its saved slot, or
 * further above it than the prologue reserved). */
bool realigned_frame_entry_sp(const struct realigned_frame *frame, uint64_t sp,
			      const struct stack_copy *stack, uint64_t *entry_sp);

#endif
