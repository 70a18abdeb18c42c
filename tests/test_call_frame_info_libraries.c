/* call_frame_info against a second reader, on the real libraries of this
 * machine: for rows of every FDE of libcrypto, libssl, libc, ld.so,
 * libstdc++, libz, libcoreclr and libclrjit, and the arm64 ones the cross
 * build installs (with .NET's arm64 runtime pack from the NuGet cache), the
 * step's caller is compared with what libdw's dwarf_frame_cfa and
 * dwarf_frame_register say, worked out here by hand for the rules they
 * give: a CFA from a register plus an offset or by a DWARF expression (run
 * here by a small evaluator of the operations these libraries use), the
 * return address and callee-saved registers saved at the CFA plus an
 * offset. Every register and every stack slot holds a value of its own, so
 * a rule applied to the wrong register or slot shows.
 *
 * Each library is a test of its own, skipped where it is not on the
 * machine; the program exits 77 (meson's skip) when every one was. */
#include "call_frame_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define COPY_START 0x7ffd00000000ULL
#define COPY_WORDS (128 * 1024)
#define SP	   (COPY_START + COPY_WORDS * 4) /* mid-copy: rows read below it too */

static uint64_t copy[COPY_WORDS];

/* Slot i holds an address of the copy of its own, another slot's: an
 * expression that reads a saved stack pointer there and the slot that
 * gives finds the copy again. */
static uint64_t slot_value(uint64_t address)
{
	return COPY_START + ((address - COPY_START) / 8 * 5 + 512) % COPY_WORDS * 8;
}

static uint64_t register_value(unsigned regno)
{
	return SP + 64 + regno * 64; /* in the copy: expressions deref them */
}

struct machine_numbers {
	int sp, fp, lr; /* lr -1 on x86-64 */
};

/* Every register known, with a value of its own; `general` is filled. */
static struct frame_registers sample_registers(enum frame_machine machine,
					       const struct machine_numbers *numbers,
					       struct general_registers *general)
{
	struct frame_registers registers = {.sp = SP,
					    .bp = register_value((unsigned)numbers->fp),
					    .bp_known = true,
					    .interrupted = true,
					    .machine = machine,
					    .general = general};

	if (numbers->lr >= 0) {
		registers.lr = register_value((unsigned)numbers->lr);
		registers.lr_known = true;
	}
	for (unsigned regno = 0; regno < FRAME_GENERAL_REGISTERS; regno++)
		general->values[regno] = register_value(regno);
	general->known = machine == FRAME_MACHINE_X86_64 ? 0xffffU : 0x1fffffffU;
	return registers;
}

struct tally {
	size_t rows, outermost, compared, expressions, expressions_compared;
};

/* Runs `ops` as DWARF says, over the sample's registers and the copy's
 * slots: the operations of these libraries' CFA expressions (OpenSSL's
 * saved stack pointers, the PLT's, glibc's). False for any other. */
static bool evaluate_by_hand(const Dwarf_Op *ops, size_t count,
			     const struct machine_numbers *numbers, uint64_t *value)
{
	uint64_t stack[16];
	size_t depth = 0;

	for (size_t i = 0; i < count; i++) {
		uint8_t atom = ops[i].atom;
		uint64_t top = depth ? stack[depth - 1] : 0,
			 below = depth > 1 ? stack[depth - 2] : 0;
		int regno = -1;

		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31)
			regno = atom - DW_OP_breg0;
		else if (atom == DW_OP_bregx)
			regno = ops[i].number < 64 ? (int)ops[i].number : 99;
		if (regno >= 0) {
			if (depth == 16 || regno >= 33)
				return false;
			stack[depth++] =
			    (regno == numbers->sp ? SP : register_value((unsigned)regno)) +
			    (atom == DW_OP_bregx ? ops[i].number2 : ops[i].number);
			continue;
		}
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			if (depth == 16)
				return false;
			stack[depth++] = atom - DW_OP_lit0;
			continue;
		}
		switch (atom) {
		case DW_OP_const1u:
		case DW_OP_const2u:
		case DW_OP_const4u:
		case DW_OP_const8u:
		case DW_OP_constu:
		case DW_OP_const1s:
		case DW_OP_const2s:
		case DW_OP_const4s:
		case DW_OP_const8s:
		case DW_OP_consts:
			if (depth == 16)
				return false;
			stack[depth++] = ops[i].number;
			continue;
		case DW_OP_deref:
			if (!depth || top < COPY_START || top - COPY_START >= sizeof(copy) ||
			    top % 8)
				return false;
			stack[depth - 1] = slot_value(top);
			continue;
		case DW_OP_plus_uconst:
			if (!depth)
				return false;
			stack[depth - 1] = top + ops[i].number;
			continue;
		}
		if (depth < 2)
			return false;
		switch (atom) {
		case DW_OP_plus:
			below += top;
			break;
		case DW_OP_minus:
			below -= top;
			break;
		case DW_OP_and:
			below &= top;
			break;
		case DW_OP_or:
			below |= top;
			break;
		case DW_OP_shl:
			below = top < 64 ? below << top : 0;
			break;
		case DW_OP_ge:
			below = (int64_t)below >= (int64_t)top;
			break;
		case DW_OP_gt:
			below = (int64_t)below > (int64_t)top;
			break;
		case DW_OP_lt:
			below = (int64_t)below < (int64_t)top;
			break;
		case DW_OP_le:
			below = (int64_t)below <= (int64_t)top;
			break;
		default:
			return false;
		}
		stack[depth - 2] = below;
		depth--;
	}
	if (!depth)
		return false;
	*value = stack[depth - 1];
	return true;
}

/* The value of register `regno` by a rule "saved at CFA + offset" from
 * libdw, or false when the rule is another. */
static bool saved_at(Dwarf_Frame *frame, int regno, uint64_t cfa, uint64_t *value)
{
	Dwarf_Op memory[3], *ops;
	size_t count;

	if (dwarf_frame_register(frame, regno, memory, &ops, &count) != 0 || count == 0 ||
	    ops[0].atom != DW_OP_call_frame_cfa || count > 2 ||
	    (count == 2 && ops[1].atom != DW_OP_plus_uconst))
		return false;
	*value = slot_value(cfa + (count == 2 ? ops[1].number : 0));
	return true;
}

/* Whether libdw says the caller's `regno` is the callee's. */
static bool same_value(Dwarf_Frame *frame, int regno)
{
	Dwarf_Op memory[3], *ops;
	size_t count;

	return dwarf_frame_register(frame, regno, memory, &ops, &count) == 0 && count == 0 &&
	       ops == NULL;
}

static void compare_row(struct call_frame_info *info, Dwarf_CFI *cfi, uint64_t address,
			enum frame_machine machine, const struct machine_numbers *numbers,
			struct tally *tally)
{
	struct stack_copy stack = {
	    .start = COPY_START, .bytes = (const uint8_t *)copy, .size = sizeof(copy)};
	struct general_registers general;
	struct frame_registers registers = sample_registers(machine, numbers, &general);
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t count;
	int return_column;
	uint64_t cfa, value;
	enum frame_step step;

	const unsigned callee_saved = machine == FRAME_MACHINE_X86_64 ? 3 : 19; /* rbx, x19 */

	if (dwarf_cfi_addrframe(cfi, address, &frame) != 0)
		return;
	tally->rows++;
	return_column = dwarf_frame_info(frame, NULL, NULL, NULL);
	step = call_frame_info_step(info, address, &stack, &registers);
	assert_int_equal(dwarf_frame_cfa(frame, &ops, &count), 0);
	if (step == FRAME_STEP_OUTERMOST) {
		tally->outermost++;
		free(frame);
		return;
	}
	if (count != 1 || ops[0].atom != DW_OP_bregx) {
		tally->expressions++;
		/* An expression may index by a register (OpenSSL's r9 * 8),
		 * whose value here leaves the copy: then no step either. */
		if (!evaluate_by_hand(ops, count, numbers, &cfa)) {
			if (step == FRAME_STEP_DONE)
				fail_msg("%#lx: a CFA expression this test cannot run was followed",
					 (unsigned long)address);
			free(frame);
			return;
		}
		tally->expressions_compared++;
	} else {
		cfa =
		    ((int)ops[0].number == numbers->sp ? SP
						       : register_value((unsigned)ops[0].number)) +
		    ops[0].number2;
	}
	if (saved_at(frame, return_column, cfa, &value) ||
	    (same_value(frame, return_column) &&
	     (value = register_value((unsigned)numbers->lr), numbers->lr >= 0))) {
		if (step != FRAME_STEP_DONE)
			fail_msg("%#lx: the CFA is %#lx, the return address %#lx, the step gave %d",
				 (unsigned long)address, (unsigned long)cfa, (unsigned long)value,
				 step);
		assert_int_equal(registers.sp, cfa);
		assert_int_equal(registers.ip, value);
		tally->compared++;
		/* A callee-saved register restored from its slot: rbx, x19. */
		if (saved_at(frame, callee_saved, cfa, &value))
			assert_int_equal(general.values[callee_saved], value);
	}
	free(frame);
}

/* The start of every FDE of `file`, from the binary search table of its
 * .eh_frame_hdr (as GNU ld writes it: datarel sdata4 pairs, a udata4
 * count), sorted; their count, 0 without one. */
static size_t fde_starts(struct elf_file *file, uint64_t **starts)
{
	Elf_Scn *section = NULL;
	GElf_Shdr header;
	size_t names, count = 0;
	Elf_Data *data = NULL;
	const uint8_t *bytes;
	int32_t location;
	uint32_t fdes;

	*starts = NULL;
	if (elf_getshdrstrndx(file->elf, &names) != 0)
		return 0;
	while ((section = elf_nextscn(file->elf, section)))
		if (gelf_getshdr(section, &header) &&
		    !strcmp(elf_strptr(file->elf, names, header.sh_name), ".eh_frame_hdr"))
			break;
	if (!section || !(data = elf_getdata(section, NULL)) || data->d_size < 12)
		return 0;
	bytes = data->d_buf;
	assert_int_equal(bytes[2], 0x03); /* DW_EH_PE_udata4 */
	assert_int_equal(bytes[3], 0x3b); /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */
	memcpy(&fdes, bytes + 8, sizeof(fdes));
	assert_true(12 + (size_t)fdes * 8 <= data->d_size);
	*starts = calloc(fdes, sizeof(**starts));
	for (; count < fdes; count++) {
		memcpy(&location, bytes + 12 + count * 8, sizeof(location));
		(*starts)[count] = header.sh_addr + (uint64_t)(int64_t)location;
	}
	return count;
}

/* Rows of every FDE of the file at `path`: its start and three points in. */
static void compare_file(const char *path, enum frame_machine machine,
			 const struct machine_numbers *numbers)
{
	struct elf_file *file = elf_file_open(open(path, O_RDONLY | O_CLOEXEC));
	struct call_frame_info *info;
	struct elf_file *second;
	Dwarf_CFI *cfi;
	uint64_t *starts;
	size_t count;
	struct tally tally = {0};

	if (!file)
		fail_msg("%s: not an ELF file", path);
	second = elf_file_open(open(path, O_RDONLY | O_CLOEXEC));
	count = fde_starts(file, &starts);
	assert_non_null(info = call_frame_info_open(file));
	assert_non_null(cfi = dwarf_getcfi_elf(second->elf));
	for (size_t i = 0; i < count; i++) {
		uint64_t end = i + 1 < count ? starts[i + 1] : starts[i] + 4;

		for (uint64_t quarter = 0; quarter < 4; quarter++)
			compare_row(info, cfi, starts[i] + (end - starts[i]) * quarter / 4, machine,
				    numbers, &tally);
	}
	print_message("%s: %zu FDEs, %zu rows (%zu outermost, %zu callers compared; %zu CFAs "
		      "by expression, %zu of them compared)\n",
		      path, count, tally.rows, tally.outermost, tally.compared, tally.expressions,
		      tally.expressions_compared);
	/* Every row but the outermost ones has its caller compared, but for
	 * 1 in 100: rows whose return address has a rule of another kind
	 * (in a register), or whose CFA expression indexes by a register's
	 * value (OpenSSL's r9 * 8, outside the copy here). */
	assert_true(count > 0 && tally.rows > 0);
	if ((tally.compared + tally.outermost) * 100 < tally.rows * 99)
		fail_msg("%s: the callers of %zu of %zu rows compared", path,
			 tally.compared + tally.outermost, tally.rows);
	free(starts);
	dwarf_cfi_end(cfi);
	elf_file_close(second);
	call_frame_info_free(info);
}

/* A library of this machine: a path pattern, its first match read. */
struct library {
	const char *pattern;
	enum frame_machine machine;
};

static const struct machine_numbers x86_64_numbers = {7, 6, -1}, aarch64_numbers = {31, 29, 30};

static int skipped;

static void test_library(void **state)
{
	const struct library *library = *state;
	glob_t found;

	if (glob(library->pattern, GLOB_TILDE, NULL, &found) != 0 ||
	    access(found.gl_pathv[0], R_OK) != 0) {
		print_message("skipped: %s: not on this machine\n", library->pattern);
		globfree(&found);
		skipped++;
		skip();
		return;
	}
	compare_file(found.gl_pathv[0], library->machine,
		     library->machine == FRAME_MACHINE_X86_64 ? &x86_64_numbers : &aarch64_numbers);
	globfree(&found);
}

#define LIBRARY(pattern, machine)                                                                  \
	{                                                                                          \
		pattern, test_library, NULL, NULL, &(struct library)                               \
		{                                                                                  \
			pattern, machine                                                           \
		}                                                                                  \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    LIBRARY("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/lib/x86_64-linux-gnu/libssl.so.3", FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/lib/x86_64-linux-gnu/libc.so.6", FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/lib/x86_64-linux-gnu/libz.so.1", FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/share/dotnet/shared/Microsoft.NETCore.App/*/libcoreclr.so",
		    FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/share/dotnet/shared/Microsoft.NETCore.App/*/libclrjit.so",
		    FRAME_MACHINE_X86_64),
	    LIBRARY("/usr/lib/aarch64-linux-gnu/libcrypto.so.3", FRAME_MACHINE_AARCH64),
	    LIBRARY("/usr/lib/aarch64-linux-gnu/libssl.so.3", FRAME_MACHINE_AARCH64),
	    LIBRARY("/usr/lib/aarch64-linux-gnu/libc.so.6", FRAME_MACHINE_AARCH64),
	    LIBRARY("/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", FRAME_MACHINE_AARCH64),
	    LIBRARY("/usr/lib/aarch64-linux-gnu/libz.so.1", FRAME_MACHINE_AARCH64),
	    LIBRARY("/usr/lib/aarch64-linux-gnu/libstdc++.so.6", FRAME_MACHINE_AARCH64),
	    LIBRARY("~/.nuget/packages/microsoft.netcore.app.runtime.linux-arm64/*/runtimes/"
		    "linux-arm64/native/libcoreclr.so",
		    FRAME_MACHINE_AARCH64),
	};
	int failed;

	for (size_t i = 0; i < COPY_WORDS; i++)
		copy[i] = slot_value(COPY_START + i * 8);
	elf_version(EV_CURRENT);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	/* meson's skip: none of the libraries is here */
	return failed == 0 && skipped == (int)(sizeof(tests) / sizeof(*tests)) ? 77 : failed;
}
