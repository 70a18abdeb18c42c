/* The call frame information (CFI) of one ELF file, and the one unwinding
 * step profcpu takes with it: finding the return address of the leaf frame.
 *
 * Frame-pointer callchains lose the caller of a leaf that keeps no frame
 * pointer (most of libc, code built with -fomit-frame-pointer, a function in
 * its prologue or epilogue): the kernel reads the return address from the
 * caller's frame instead. The CFI rule at the leaf's address says where the
 * leaf's own return address lies on the stack; the sample's copy of the top
 * of the user stack holds it.
 *
 * libdw reads the CFI (dwarf_getcfi_elf, dwarf_cfi_addrframe): it is already
 * profcpu's DWARF reader, and it hands back the rules in force at one
 * address, which is all one step needs. libunwind would need a remote address
 * space with accessors over the copy for the same single step.
 *
 * The file and the stack copy are untrusted: a rule that is not the stack
 * pointer plus an offset, or a slot outside the copy, gives no answer. x86-64
 * ELF files only. */
#ifndef PROFCPU_CALL_FRAME_INFO_H
#define PROFCPU_CALL_FRAME_INFO_H

#include "elf_file.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct call_frame_info;

/* Reads the .eh_frame of `file`, or its .debug_frame when it has none (a
 * separate debug file), and takes the file. NULL when it has neither; the
 * file then stays the caller's. */
struct call_frame_info *call_frame_info_open(struct elf_file *file);
void call_frame_info_free(struct call_frame_info *info);

/* The return address of the frame executing at `address` (a virtual address
 * of the file, as its symbols use), read from `stack`, a copy of `size` bytes
 * of the stack from the stack pointer up, where the CFI rule at `address` puts
 * it. False when no rule covers the address, the canonical frame address is
 * not the stack pointer plus an offset (a frame kept in rbp, which the
 * kernel's frame-pointer walk already followed; an expression, as in PLT
 * entries), the return address has no saved slot, or the slot is outside the
 * copy. */
bool call_frame_info_return_address(struct call_frame_info *info, uint64_t address,
				    const uint8_t *stack, size_t size, uint64_t *return_address);

#endif
