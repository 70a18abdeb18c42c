#include "windows_unwind.h"
#include "arm64_unwind.h"
#include "x64_unwind.h"

enum frame_step windows_unwind_step(const struct windows_unwind_code_at *at, bool leaf,
				    const struct stack_copy *stack,
				    struct frame_registers *registers)
{
	switch (registers->machine) {
	case FRAME_MACHINE_X86_64:
		return at->info ? x64_unwind_step(at, leaf, stack, registers) : FRAME_STEP_NO_RULE;
	case FRAME_MACHINE_AARCH64:
		return arm64_unwind_step(at, leaf, stack, registers);
	}
	return FRAME_STEP_NO_RULE;
}
