/* The unwind data of .NET's precompiled and JIT code: Windows' formats,
 * which .NET uses on every OS. ReadyToRun images carry it for each method
 * (a RUNTIME_FUNCTION's unwind info), one format per machine:
 *
 *   - x64: UNWIND_INFO and its unwind codes (x64_unwind.h);
 *   - arm64: .xdata and its unwind codes, or the packed form held in the
 *     RUNTIME_FUNCTION itself (arm64_unwind.h).
 *
 * windows_unwind_step() takes the step of the sampled process's machine. */
#ifndef PROFCPU_WINDOWS_UNWIND_H
#define PROFCPU_WINDOWS_UNWIND_H

#include "call_frame_info.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WINDOWS_UNWIND_MAX_EPILOG 32 /* code bytes enough to recognize an epilog */

/* The precompiled code at one address. */
struct windows_unwind_code_at {
	const uint8_t *info; /* the function's unwind info (x64 UNWIND_INFO,
				arm64 .xdata); NULL for packed arm64 data */
	size_t info_size;
	uint32_t offset;     /* of the address from the function's start */
	const uint8_t *code; /* the instructions from the address on (at most
				WINDOWS_UNWIND_MAX_EPILOG bytes, not past the
				function's end); NULL when unknown */
	size_t code_size;
	uint32_t packed; /* arm64: the RUNTIME_FUNCTION's packed unwind data
			    (its Flag bits not 0), when info is NULL */
	/* x64 JIT code: .NET's on-stack replacement of a method (OSR code),
	   which runs on top of the frame of the same method's Tier0 code and
	   took its frame pointer over (jit_prolog.h): the frame below it is
	   to be unwound with frame_at_stack_pointer. */
	bool osr;
	/* x64: the frame's frame register is not what its prolog set it to,
	   and its stack pointer is: the frame is found from the stack
	   pointer (a Tier0 frame below its OSR code, which keeps a fixed
	   frame: no localloc). Set by the walk, not by the lookup. */
	bool frame_at_stack_pointer;
};

/* Unwinds the frame whose registers are `registers` and whose code is `at`,
 * in the format of registers->machine. For the leaf the address is the
 * sampled instruction (which may sit in a prolog or an epilog); for a
 * caller's frame it is the byte before the return address, inside the
 * call. FRAME_STEP_NO_RULE when the info is of a kind the step does not
 * follow, so that the caller can fall back on the frame pointers. */
enum frame_step windows_unwind_step(const struct windows_unwind_code_at *at, bool leaf,
				    const struct stack_copy *stack,
				    struct frame_registers *registers);

#endif
