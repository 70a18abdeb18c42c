#include "perf_user_registers.h"

#include <asm/perf_regs.h>

/* x0 to x30, sp and pc, as perf takes them (not the SVE vector length).
 * The walk needs pc, sp, x29 and lr (x30), and CFI rules the others; perf's
 * unwinders read them too. */
const uint64_t perf_user_registers = (1ULL << PERF_REG_ARM64_MAX) - 1;

const enum frame_machine perf_user_registers_machine = FRAME_MACHINE_AARCH64;

/* The registers the walk needs: pc, sp, x29 and lr. */
#define WALK_REGISTERS                                                                             \
	(1ULL << PERF_REG_ARM64_PC | 1ULL << PERF_REG_ARM64_SP | 1ULL << PERF_REG_ARM64_X29 |      \
	 1ULL << PERF_REG_ARM64_LR)

bool perf_sample_frame_registers(const struct perf_sample *sample,
				 struct frame_registers *registers,
				 struct general_registers *general)
{
	uint64_t values[64], mask = perf_sample_user_registers(sample, values);

	*registers = (struct frame_registers){.ip = values[PERF_REG_ARM64_PC],
					      .sp = values[PERF_REG_ARM64_SP],
					      .bp = values[PERF_REG_ARM64_X29],
					      .bp_known = true,
					      .lr = values[PERF_REG_ARM64_LR],
					      .lr_known = true,
					      .interrupted = true,
					      .machine = FRAME_MACHINE_AARCH64,
					      .general = general};
	/* perf numbers x0 to x28 as DWARF does; x29, lr and sp have fields. */
	general->known = 0;
	for (unsigned regno = PERF_REG_ARM64_X0; regno <= PERF_REG_ARM64_X28; regno++)
		if (mask >> regno & 1) {
			general->values[regno] = values[regno];
			general->known |= 1U << regno;
		}
	return (mask & WALK_REGISTERS) == WALK_REGISTERS;
}
