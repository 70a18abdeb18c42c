/* The call frame information (CFI) of one ELF file, and one unwinding step
 * taken with it: from a frame's registers to its caller's.
 *
 * libdw reads the CFI (dwarf_getcfi_elf, dwarf_cfi_addrframe) and hands back
 * the rules in force at one address; the step applies them to the registers
 * the walk tracks (stack_walk.h) and to the sample's copy of the user stack.
 *
 * The file and the stack copy are untrusted: a rule this step cannot follow,
 * or a slot outside the copy, gives no answer. x86-64 and arm64 ELF files. */
#ifndef PROFCPU_CALL_FRAME_INFO_H
#define PROFCPU_CALL_FRAME_INFO_H

#include "elf_file.h"
#include "stack_copy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The machines whose code a walk follows: the one of the sampled process. */
enum frame_machine { FRAME_MACHINE_X86_64, FRAME_MACHINE_AARCH64 };

/* The general registers other than the stack pointer, the frame pointer
 * and the link register, which have fields of their own, by their DWARF
 * numbers: x86-64's rax (0) to r15 (15), arm64's x0 to x28. */
#define FRAME_GENERAL_REGISTERS 32
struct general_registers {
	uint64_t values[FRAME_GENERAL_REGISTERS];
	uint32_t known; /* bit n: values[n] holds the frame's value */
};

/* The registers of a frame a walk tracks: the instruction pointer, the
 * stack pointer, the frame pointer (rbp on x86-64, x29 on arm64), which a
 * callee may save and a caller's CFI may use as its frame base, on arm64
 * the link register (x30), where a call leaves the return address (a leaf
 * that has not saved it yet returns there), and the other general
 * registers, which CFI rules may read: the sample's, then in each caller
 * those its callee's CFI restores or leaves alone (the callee-saved rbx and
 * r12 to r15; x19 to x28). */
struct frame_registers {
	uint64_t ip, sp, bp;
	bool bp_known; /* false once a frame clobbered the frame pointer without saving it */
	uint64_t lr;
	bool lr_known; /* the leaf's only (arm64): a caller's was clobbered by its call */
	/* The frame was stopped at ip rather than calling from it: the
	 * sample's leaf, or the state a signal frame restores. Its code is
	 * the one at ip, not at ip - 1, and it may be anywhere in its
	 * prolog or epilog. */
	bool interrupted;
	enum frame_machine machine;
	/* The other general registers, NULL when none is known. A walk keeps
	 * them in a buffer of its own that each step updates in place, once
	 * it has succeeded: the copies of a frame_registers share it, so a
	 * step that copies its registers to try them need not copy these. */
	struct general_registers *general;
};

/* The code address a return address of `machine` stands for. arm64 code
 * built with pointer authentication signs the return address it saves
 * (paciasp): the signature sits in the bits above the 48 of a user address
 * (Linux maps no user memory above 2^48 unless asked to). */
static inline uint64_t frame_return_address(enum frame_machine machine, uint64_t value)
{
	/* User addresses on arm64: 48 bits; above them, a pointer's
	 * signature or tag. */
	return machine == FRAME_MACHINE_AARCH64 ? value & ((1ULL << 48) - 1) : value;
}

struct call_frame_info;

/* Reads the .eh_frame of `file`, or its .debug_frame when it has none (a
 * separate debug file), and takes the file. NULL when it has neither; the
 * file then stays the caller's. */
struct call_frame_info *call_frame_info_open(struct elf_file *file);
void call_frame_info_free(struct call_frame_info *info);

enum frame_step {
	FRAME_STEP_DONE,      /* `registers` now hold the caller's */
	FRAME_STEP_OUTERMOST, /* the CFI says there is no caller (_start, start_thread),
				 or the code is the entry point's, without CFI */
	FRAME_STEP_NO_RULE,   /* no CFI covers the address */
	FRAME_STEP_FAILED,    /* a rule this step cannot follow, or memory outside the copy */
};

/* Unwinds the frame executing at `file_address` (the virtual address of the
 * file, as its symbols use, of registers->ip; for a caller's frame, of the
 * call instruction, i.e. ip - 1) from `registers` to its caller's, by every
 * rule the CFI may give: the canonical frame address (CFA) from any register
 * plus an offset or by a DWARF expression (dwarf_expression.h); each
 * register the same as the callee's, undefined, saved at the CFA plus an
 * offset, the CFA plus an offset, another register, or by an expression
 * giving its slot or its value. A signal frame's caller is the state it
 * interrupted (interrupted set). Registers read from `stack` are noted in
 * its reads. `registers` change only on FRAME_STEP_DONE; FRAME_STEP_FAILED
 * when a rule needs what is unknown (a register, memory outside the copy),
 * an operation is not followed, or `registers` are another machine's than
 * the file's. */
enum frame_step call_frame_info_step(struct call_frame_info *info, uint64_t file_address,
				     const struct stack_copy *stack,
				     struct frame_registers *registers);

#endif
