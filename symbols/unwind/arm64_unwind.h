/* Windows ARM64 unwind data, which arm64 ReadyToRun images carry for every
 * precompiled .NET method: one step from a frame to its caller, as the
 * runtime's own unwinder takes it.
 *
 * A RUNTIME_FUNCTION (begin RVA, unwind word) either points at .xdata (the
 * word's two low bits 0): a header (function length, epilog scopes) and
 * unwind codes, one per prolog instruction, listed from the last one run;
 * or packs a canonical prolog into the word itself (Flag 1, or 2 for a
 * fragment without prolog): the saved integer and FP registers, whether
 * x29/lr are saved as a frame record (CR), and the frame's size. Either
 * way the step undoes the prolog: it adds back what the prolog took from
 * sp, and reads lr and x29 from their slots. In a leaf sampled inside the
 * prolog or an epilog, only the instructions already run are undone; a
 * leaf that never saved lr returns to lr itself.
 *
 * Everything read is untrusted: a code that would read past the data, an
 * unknown or reserved code (SVE allocation, the runtime's trap and context
 * frames) or version, or a slot outside the stack copy ends the step
 * without changing the registers. */
#ifndef PROFCPU_ARM64_UNWIND_H
#define PROFCPU_ARM64_UNWIND_H

#include "windows_unwind.h"

/* The length of the function in bytes that `at` describes (the xdata's
 * or the packed word's), 0 when it cannot be read. */
uint32_t arm64_unwind_function_length(const struct windows_unwind_code_at *at);

/* The size of the .xdata at `info` (header, epilog scopes and unwind codes,
 * not the handler data after them), as its header words say: 0 when the
 * first `available` bytes do not hold them. */
size_t arm64_unwind_xdata_size(const uint8_t *info, size_t available);

/* Unwinds the frame whose registers are `registers` (arm64's) and whose
 * code is `at` (as windows_unwind_step). */
enum frame_step arm64_unwind_step(const struct windows_unwind_code_at *at, bool leaf,
				  const struct stack_copy *stack,
				  struct frame_registers *registers);

#endif
