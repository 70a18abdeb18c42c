#include "perf_user_registers.h"

#include <asm/perf_regs.h>

/* All general registers, flags, cs and ss, not the other segment registers.
 * The walk needs ip, sp and bp, and CFI rules the others; perf's unwinders
 * read them too. */
const uint64_t perf_user_registers =
    ((1ULL << PERF_REG_X86_64_MAX) - 1) & ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |
					    (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS));

const enum frame_machine perf_user_registers_machine = FRAME_MACHINE_X86_64;

/* perf's number of each general register by its DWARF number (rbp and rsp,
 * 6 and 7, have fields of their own). */
static const int perf_number_of_dwarf[] = {
    PERF_REG_X86_AX,
    PERF_REG_X86_DX,
    PERF_REG_X86_CX,
    PERF_REG_X86_BX,
    PERF_REG_X86_SI,
    PERF_REG_X86_DI,
    -1,
    -1,
    PERF_REG_X86_R8,
    PERF_REG_X86_R9,
    PERF_REG_X86_R10,
    PERF_REG_X86_R11,
    PERF_REG_X86_R12,
    PERF_REG_X86_R13,
    PERF_REG_X86_R14,
    PERF_REG_X86_R15,
};

/* The registers the walk needs: ip, sp and bp. */
#define WALK_REGISTERS (1ULL << PERF_REG_X86_IP | 1ULL << PERF_REG_X86_SP | 1ULL << PERF_REG_X86_BP)

bool perf_sample_frame_registers(const struct perf_sample *sample,
				 struct frame_registers *registers,
				 struct general_registers *general)
{
	uint64_t values[64], mask = perf_sample_user_registers(sample, values);

	*registers = (struct frame_registers){.ip = values[PERF_REG_X86_IP],
					      .sp = values[PERF_REG_X86_SP],
					      .bp = values[PERF_REG_X86_BP],
					      .bp_known = true,
					      .interrupted = true,
					      .machine = FRAME_MACHINE_X86_64,
					      .general = general};
	general->known = 0;
	for (unsigned regno = 0; regno < sizeof(perf_number_of_dwarf) / sizeof(int); regno++)
		if (perf_number_of_dwarf[regno] >= 0 && (mask >> perf_number_of_dwarf[regno] & 1)) {
			general->values[regno] = values[perf_number_of_dwarf[regno]];
			general->known |= 1U << regno;
		}
	return (mask & WALK_REGISTERS) == WALK_REGISTERS;
}
