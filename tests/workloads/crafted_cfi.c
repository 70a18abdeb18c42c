/* A hostile neighbour: a process that stays on the CPU in code whose
 * .eh_frame gives the canonical frame address as register 50 plus 16
 * (DW_CFA_def_cfa 50, 16: a column no x86-64 unwinder tracks). libdw hands
 * such a rule back as a DW_OP_bregx held in memory of the row it frees; an
 * unwinder that kept it read freed memory at every sample (found in
 * symbols/unwind/call_frame_info.c). A sampler walking this process's
 * stacks must stop at the leaf, with no answer, and go on sampling.
 *
 * Usage: workload_crafted_cfi   runs until killed, nearly all of its time
 * in crafted_cfi_spin. x86-64 only. */
#include <stdint.h>

void crafted_cfi_spin(uint64_t iterations);

__asm__(".text\n"
	".globl crafted_cfi_spin\n"
	".type crafted_cfi_spin, @function\n"
	"crafted_cfi_spin:\n"
	".cfi_startproc\n"
	".cfi_def_cfa 50, 16\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	".cfi_endproc\n"
	".size crafted_cfi_spin, . - crafted_cfi_spin\n");

int main(void)
{
	for (;;)
		crafted_cfi_spin(100000000);
}
