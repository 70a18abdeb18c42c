/* Unwind info for JIT code, read from its prolog.
 *
 * The runtime's jitdump carries each method's machine code but no unwind
 * data, and .NET's JIT, like crossgen2, gives many methods no rbp frame: a
 * method that pushes other registers only and calls another is skipped by
 * a frame-pointer walk. Its prolog says what its unwind info would: .NET
 * x64 prologs are a run of pushes, a stack allocation ("sub rsp, N" or
 * "push rax") and, when the method keeps a frame, "lea rbp, [rsp + N]" or
 * "mov rbp, rsp". This reads that run from the code's first bytes and
 * writes it as a Windows x64 UNWIND_INFO (x64_unwind.h), as crossgen2
 * would have. Decoding stops at the first other instruction.
 *
 * .NET's on-stack replacement (OSR) code starts otherwise: it runs on top
 * of the frame of the same method's Tier0 code, which called the runtime's
 * patchpoint helper; the helper jumped to the OSR code with the stack
 * pointer on that call's return address and rbp still the Tier0 frame's.
 * Its prolog "mov rax, [rbp]; push rax" copies the Tier0 frame's saved rbp
 * (its caller's) and then sets rbp up as usual, on the copy: so rbp no
 * longer points into the Tier0 frame, and nothing in the OSR frame does.
 * The Tier0 frame below has to be unwound from its stack pointer (the
 * runtime's own unwind info for OSR code describes it, as "phantom"
 * operations of the Tier0 frame's size, which the code alone cannot
 * tell). */
#ifndef PROFCPU_JIT_PROLOG_H
#define PROFCPU_JIT_PROLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JIT_PROLOG_CODE_BYTES 64 /* of a method's code: enough for its prolog */
#define JIT_PROLOG_MAX_INFO   40 /* bytes of the UNWIND_INFO written */

/* Writes into `info` the UNWIND_INFO that the prolog at the start of
 * `code` (`size` bytes) describes, and its length into `info_size`. False
 * when the code does not start with a prolog this reads (no operation on
 * the stack at all gives an info without codes: a frameless method).
 * `osr` tells whether the code is OSR code (above), whose info leads to
 * the Tier0 frame's return address, the transition's. */
bool jit_prolog_unwind_info(const uint8_t *code, size_t size, uint8_t info[JIT_PROLOG_MAX_INFO],
			    size_t *info_size, bool *osr);

#endif
