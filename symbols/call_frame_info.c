#include "call_frame_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* DWARF numbers of the registers a step reads (System V x86-64 psABI,
 * figure 3.36). */
enum { DWARF_REGISTER_RBP = 6, DWARF_REGISTER_RSP = 7 };

struct call_frame_info {
	struct elf_file *file;
	Dwarf_CFI *eh_frame; /* dwarf_getcfi_elf's: ended with dwarf_cfi_end */
	Dwarf *debug_info;   /* owns the .debug_frame CFI when there is no eh_frame */
	Dwarf_CFI *cfi;	     /* the one in use */
};

bool stack_copy_read(const struct stack_copy *copy, uint64_t address, uint64_t *value)
{
	uint64_t offset = address - copy->start;

	if (address < copy->start || copy->size < sizeof(*value) ||
	    offset > copy->size - sizeof(*value))
		return false;
	memcpy(value, copy->bytes + offset, sizeof(*value));
	return true;
}

struct call_frame_info *call_frame_info_open(struct elf_file *file)
{
	struct call_frame_info *info;
	GElf_Ehdr header;

	if (!file || !gelf_getehdr(file->elf, &header) || header.e_machine != EM_X86_64 ||
	    !(info = calloc(1, sizeof(*info))))
		return NULL;
	info->cfi = info->eh_frame = dwarf_getcfi_elf(file->elf);
	if (!info->cfi && (info->debug_info = dwarf_begin_elf(file->elf, DWARF_C_READ, NULL)))
		info->cfi = dwarf_getcfi(info->debug_info);
	if (!info->cfi) {
		call_frame_info_free(info);
		return NULL;
	}
	info->file = file;
	return info;
}

void call_frame_info_free(struct call_frame_info *info)
{
	if (!info)
		return;
	if (info->eh_frame)
		dwarf_cfi_end(info->eh_frame);
	if (info->debug_info)
		dwarf_end(info->debug_info);
	elf_file_close(info->file);
	free(info);
}

/* The canonical frame address, when the rule is rsp or rbp plus an offset
 * (libdw gives it as one DW_OP_bregx). Expressions (PLT entries) are not
 * followed. */
static bool canonical_frame_address(Dwarf_Frame *frame, const struct frame_registers *registers,
				    uint64_t *cfa)
{
	Dwarf_Op *ops;
	size_t count;

	if (dwarf_frame_cfa(frame, &ops, &count) != 0 || count != 1 || ops[0].atom != DW_OP_bregx)
		return false;
	if (ops[0].number == DWARF_REGISTER_RSP)
		*cfa = registers->sp + ops[0].number2;
	else if (ops[0].number == DWARF_REGISTER_RBP && registers->bp_known)
		*cfa = registers->bp + ops[0].number2;
	else
		return false;
	return true;
}

enum restored { RESTORED, UNDEFINED, UNSUPPORTED };

/* The caller's value of register `regno`: unchanged (same_value), or saved
 * at the CFA plus N (offset(N), libdw: DW_OP_call_frame_cfa then
 * DW_OP_plus_uconst N unless N is 0), or the CFA plus N itself
 * (val_offset(N): the same ending in DW_OP_stack_value). Offsets are signed;
 * unsigned sums wrap around to the same result. */
static enum restored restore_register(Dwarf_Frame *frame, int regno, uint64_t cfa,
				      const struct stack_copy *stack, uint64_t *value)
{
	Dwarf_Op ops_memory[3], *ops;
	size_t count, used = 1;
	uint64_t address = cfa;

	if (dwarf_frame_register(frame, regno, ops_memory, &ops, &count) != 0)
		return UNSUPPORTED;
	if (count == 0)
		return ops ? UNDEFINED : RESTORED; /* NULL: same_value, *value stays */
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return UNSUPPORTED;
	if (count > used && ops[used].atom == DW_OP_plus_uconst)
		address += ops[used++].number;
	if (count == used + 1 && ops[used].atom == DW_OP_stack_value) {
		*value = address;
		return RESTORED;
	}
	if (count != used)
		return UNSUPPORTED;
	return stack_copy_read(stack, address, value) ? RESTORED : UNSUPPORTED;
}

enum frame_step call_frame_info_step(struct call_frame_info *info, uint64_t file_address,
				     const struct stack_copy *stack,
				     struct frame_registers *registers)
{
	struct frame_registers caller = *registers;
	enum frame_step step = FRAME_STEP_FAILED;
	enum restored return_address;
	Dwarf_Frame *frame;
	bool signal_frame;
	uint64_t cfa;
	int regno;

	if (dwarf_cfi_addrframe(info->cfi, file_address, &frame) != 0)
		return FRAME_STEP_NO_RULE;
	regno = dwarf_frame_info(frame, NULL, NULL, &signal_frame);
	/* A signal frame's caller is the interrupted state, in a ucontext this
	 * step does not read. */
	if (regno >= 0 && !signal_frame && canonical_frame_address(frame, registers, &cfa)) {
		return_address = restore_register(frame, regno, cfa, stack, &caller.ip);
		if (return_address == UNDEFINED)
			step = FRAME_STEP_OUTERMOST;
		else if (return_address == RESTORED) {
			if (restore_register(frame, DWARF_REGISTER_RBP, cfa, stack, &caller.bp) !=
			    RESTORED)
				caller.bp_known = false;
			caller.sp = cfa;
			*registers = caller;
			step = FRAME_STEP_DONE;
		}
	}
	free(frame);
	return step;
}
