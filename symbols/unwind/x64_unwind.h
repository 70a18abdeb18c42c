/* Windows x64 unwind data, which x64 ReadyToRun images carry for every
 * precompiled .NET method (each RUNTIME_FUNCTION's UNWIND_INFO): one step
 * from a frame to its caller, as the runtime's own unwinder takes it.
 *
 * .NET on Linux keeps rbp pointing at the saved rbp in the methods that
 * push it, but about a quarter of the framework's methods push other
 * registers only and a third push nothing: their frames are described by
 * the stack pointer alone, and a frame-pointer walk through one of them
 * skips its caller. The unwind codes say exactly how far the prolog moved
 * the stack pointer and where it saved rbp.
 *
 * Everything read is untrusted: a code that would read past the info, an
 * unknown code or version, or a slot outside the stack copy ends the step
 * without changing the registers. */
#ifndef PROFCPU_X64_UNWIND_H
#define PROFCPU_X64_UNWIND_H

#include "windows_unwind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Unwinds the frame whose registers are `registers` and whose code is `at`.
 * For the leaf the address is the sampled instruction (which may sit in a
 * prolog or an epilog); for a caller's frame it is the byte before the
 * return address, inside the call. FRAME_STEP_NO_RULE when the info is of a
 * kind this step does not follow (chained, a machine frame), so that the
 * caller can fall back on the frame pointers. */
enum frame_step x64_unwind_step(const struct windows_unwind_code_at *at, bool leaf,
				const struct stack_copy *stack, struct frame_registers *registers);

#endif
