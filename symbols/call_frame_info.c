#include "call_frame_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF number of rsp (System V x86-64 psABI, figure 3.36). */
enum { DWARF_REGISTER_RSP = 7 };

struct call_frame_info {
	struct elf_file *file;
	Dwarf_CFI *eh_frame; /* dwarf_getcfi_elf's: ended with dwarf_cfi_end */
	Dwarf *debug_info;   /* owns the .debug_frame CFI when there is no eh_frame */
	Dwarf_CFI *cfi;	     /* the one in use */
};

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

/* The canonical frame address's offset from the stack pointer, when the
 * rule is rsp plus an offset (libdw gives it as one DW_OP_bregx). */
static bool frame_offset(Dwarf_Frame *frame, uint64_t *offset)
{
	Dwarf_Op *ops;
	size_t count;

	if (dwarf_frame_cfa(frame, &ops, &count) != 0 || count != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number != DWARF_REGISTER_RSP)
		return false;
	*offset = ops[0].number2;
	return true;
}

/* Where the return address is saved, when the rule is offset(N): the CFA
 * plus N (libdw: DW_OP_call_frame_cfa, then DW_OP_plus_uconst N unless N is
 * 0). Offsets are signed; unsigned sums wrap around to the same result. */
static bool return_address_slot(Dwarf_Frame *frame, uint64_t cfa, uint64_t *slot)
{
	Dwarf_Op ops_memory[3], *ops;
	size_t count;
	int regno = dwarf_frame_info(frame, NULL, NULL, NULL);

	if (regno < 0 || dwarf_frame_register(frame, regno, ops_memory, &ops, &count) != 0 ||
	    count == 0 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (count == 1) {
		*slot = cfa;
		return true;
	}
	if (count != 2 || ops[1].atom != DW_OP_plus_uconst)
		return false;
	*slot = cfa + ops[1].number;
	return true;
}

bool call_frame_info_return_address(struct call_frame_info *info, uint64_t address,
				    const uint8_t *stack, size_t size, uint64_t *return_address)
{
	Dwarf_Frame *frame;
	uint64_t cfa, slot; /* as offsets from the stack pointer */
	bool signal_frame, found;

	if (dwarf_cfi_addrframe(info->cfi, address, &frame) != 0)
		return false;
	/* A signal frame's "return address" is the interrupted instruction. */
	found = dwarf_frame_info(frame, NULL, NULL, &signal_frame) >= 0 && !signal_frame &&
		frame_offset(frame, &cfa) && return_address_slot(frame, cfa, &slot) &&
		size >= sizeof(*return_address) && slot <= size - sizeof(*return_address);
	if (found)
		memcpy(return_address, stack + slot, sizeof(*return_address));
	free(frame);
	return found;
}
