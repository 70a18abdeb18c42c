#include "perf_user_registers.h"

#include <asm/perf_regs.h>

/* All general registers, flags, cs and ss, not the other segment registers.
 * The walk needs ip, sp and bp; perf's unwinders read the rest. */
const uint64_t perf_user_registers =
    ((1ULL << PERF_REG_X86_64_MAX) - 1) & ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |
					    (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS));

const enum frame_machine perf_user_registers_machine = FRAME_MACHINE_X86_64;

bool perf_sample_frame_registers(const struct perf_sample *sample,
				 struct frame_registers *registers)
{
	*registers = (struct frame_registers){.machine = FRAME_MACHINE_X86_64, .bp_known = true};
	return perf_sample_user_register(sample, PERF_REG_X86_IP, &registers->ip) &&
	       perf_sample_user_register(sample, PERF_REG_X86_SP, &registers->sp) &&
	       perf_sample_user_register(sample, PERF_REG_X86_BP, &registers->bp);
}
