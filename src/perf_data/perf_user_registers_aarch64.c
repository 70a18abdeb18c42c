#include "perf_user_registers.h"

#include <asm/perf_regs.h>

/* x0 to x30, sp and pc, as perf takes them (not the SVE vector length).
 * The walk needs pc, sp, x29 and lr (x30), and CFI rules the others; perf's
 * unwinders read them too. */
const uint64_t perf_user_registers = (1ULL << PERF_REG_ARM64_MAX) - 1;

const enum frame_machine perf_user_registers_machine = FRAME_MACHINE_AARCH64;

bool perf_sample_frame_registers(const struct perf_sample *sample,
				 struct frame_registers *registers,
				 struct general_registers *general)
{
	*registers = (struct frame_registers){.machine = FRAME_MACHINE_AARCH64,
					      .bp_known = true,
					      .lr_known = true,
					      .interrupted = true,
					      .general = general};
	general->known = 0;
	/* perf numbers x0 to x28 as DWARF does; x29, lr and sp have fields. */
	for (unsigned regno = PERF_REG_ARM64_X0; regno <= PERF_REG_ARM64_X28; regno++)
		if (perf_sample_user_register(sample, regno, &general->values[regno]))
			general->known |= 1U << regno;
	return perf_sample_user_register(sample, PERF_REG_ARM64_PC, &registers->ip) &&
	       perf_sample_user_register(sample, PERF_REG_ARM64_SP, &registers->sp) &&
	       perf_sample_user_register(sample, PERF_REG_ARM64_X29, &registers->bp) &&
	       perf_sample_user_register(sample, PERF_REG_ARM64_LR, &registers->lr);
}
