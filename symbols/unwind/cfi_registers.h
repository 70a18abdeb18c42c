/* The register numbers the CFI of a file names, checked before libdw runs
 * it. libdw keeps a row's rules in an array as long as the highest
 * register number a rule of the row names: a crafted .eh_frame naming
 * register 195,000,000 (DW_CFA_GNU_negative_offset_extended) made it
 * allocate and clear about 2 GiB for each address looked up there, for
 * every sample in that code (found by fuzz_call_frame_info).
 *
 * The check walks every CIE and FDE of the section and every CFA
 * instruction in them; an instruction it does not know ends its entry, as
 * libdw stops there too. Real CFI names registers below 128 (x86-64's
 * highest DWARF number in use is 130, for the mask registers, which no
 * compiler's CFI saves). */
#ifndef PROFCPU_CFI_REGISTERS_H
#define PROFCPU_CFI_REGISTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The highest register number a file's CFI may name. */
#define CFI_MAX_REGISTER 1023

/* Whether every CFA instruction of the .eh_frame (`is_eh_frame`) or
 * .debug_frame section `bytes` (`size` bytes) names registers up to
 * CFI_MAX_REGISTER only. */
bool cfi_registers_bounded(const uint8_t *bytes, size_t size, bool is_eh_frame);

#endif
