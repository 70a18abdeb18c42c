/* The arm64 unwind steps against real arm64 code from .NET's runtime pack
 * (NuGet): every method of its CoreLib (arm64_unwind.h, .xdata) and every
 * function of its libcoreclr.so (call_frame_info.h, DWARF CFI), whose
 * prologs and epilogs this test runs on a small emulator of the arm64
 * instructions they use (stores, loads, stack adjustments, pointer
 * authentication). At each instruction of a prolog and of each epilog, and
 * in the body, the step from the emulated registers and stack must give
 * back the caller's lr, sp and x29 as they were at the call. Packed unwind
 * data, which crossgen2 does not write, is checked on canonical prologs
 * written here from the format's description. Skipped where the runtime
 * pack is not restored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arm64_runtime_pack.h"
#include "arm64_unwind.h"
#include "call_frame_info.h"
#include "elf_file.h"
#include "pe_image.h"
#include "readytorun.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The emulated stack: STACK_WORDS words below CALLER_SP. */
enum { STACK_WORDS = 8192 };
#define CALLER_SP     0x7fff00000000ULL
#define CALLER_FP     0x7fff00001230ULL
#define RETURN	      0x0000aaaa12345678ULL
#define PAC_SIGNATURE 0x005d000000000000ULL /* what pacibsp puts in lr's top bits */

struct cpu {
	uint64_t x[32]; /* x[31] is sp */
	uint64_t stack[STACK_WORDS];
	bool failed;
};

static uint64_t *slot(struct cpu *cpu, uint64_t address)
{
	static uint64_t ignored;
	uint64_t low = CALLER_SP - 8 * STACK_WORDS;

	if (address < low || address + 8 > CALLER_SP + 0 || address % 8) {
		cpu->failed = true;
		return &ignored;
	}
	return &cpu->stack[(address - low) / 8];
}

static int64_t sign_extend(uint32_t value, unsigned bits)
{
	return (int64_t)((uint64_t)value << (64 - bits)) >> (64 - bits);
}

/* Register n of a load or store: 31 is xzr there, and FP registers (d8..d15)
 * are kept in x's place, which the walk does not read. */
static uint64_t *reg(struct cpu *cpu, unsigned n, bool vector)
{
	static uint64_t scratch;

	return vector || n == 31 ? &scratch : &cpu->x[n];
}

/* Runs one instruction; false for one this emulator does not know. */
static bool run(struct cpu *cpu, uint32_t insn)
{
	unsigned rt = insn & 31, rn = insn >> 5 & 31, rt2 = insn >> 10 & 31;
	bool vector = insn >> 26 & 1;

	if ((insn & 0xfffff01f) == 0xd503201f) { /* hints: nop, paci[ab]sp, auti[ab]sp, bti */
		if (insn == 0xd503233f || insn == 0xd503237f)
			cpu->x[30] |= PAC_SIGNATURE;
		if (insn == 0xd50323bf || insn == 0xd50323ff)
			cpu->x[30] &= ~PAC_SIGNATURE;
		return true;
	}
	if ((insn & 0x3a000000) == 0x28000000) { /* load/store pair */
		unsigned type = insn >> 23 & 7, opc = insn >> 30;
		int64_t offset = sign_extend(insn >> 15 & 0x7f, 7) * 8;
		uint64_t base, address;

		if (rn != 31 || !(opc == 2 || (vector && opc == 1)) || type < 1 || type > 3)
			return false;
		base = cpu->x[31];
		address = type == 1 ? base : base + (uint64_t)offset; /* post-index: at base */
		if (insn >> 22 & 1) {
			*reg(cpu, rt, vector) = *slot(cpu, address);
			*reg(cpu, rt2, vector) = *slot(cpu, address + 8);
		} else {
			*slot(cpu, address) = *reg(cpu, rt, vector);
			*slot(cpu, address + 8) = *reg(cpu, rt2, vector);
		}
		if (type != 2)
			cpu->x[31] = base + (uint64_t)offset;
		return true;
	}
	if ((insn & 0x3b000000) == 0x39000000 || (insn & 0x3b200400) == 0x38000400) {
		/* load/store register: unsigned offset, or pre/post-index */
		bool unsigned_offset = (insn & 0x3b000000) == 0x39000000;
		unsigned opc = insn >> 22 & 3;
		int64_t offset = unsigned_offset ? (int64_t)(insn >> 10 & 0xfff) * 8
						 : sign_extend(insn >> 12 & 0x1ff, 9);
		bool post = !unsigned_offset && !(insn >> 11 & 1);
		uint64_t address = cpu->x[31] + (uint64_t)(post ? 0 : offset);

		if (insn >> 30 != 3 || rn != 31 || opc > 1)
			return false;
		if (opc == 1)
			*reg(cpu, rt, vector) = *slot(cpu, address);
		else
			*slot(cpu, address) = *reg(cpu, rt, vector);
		if (!unsigned_offset)
			cpu->x[31] += (uint64_t)offset;
		return true;
	}
	if ((insn & 0x3f800000) == 0x11000000 && insn >> 31) { /* add/sub immediate, 64-bit */
		uint64_t immediate = (uint64_t)(insn >> 10 & 0xfff) << (insn >> 22 & 1 ? 12 : 0);
		bool subtract = insn >> 30 & 1;

		if ((rt != 31 && rt != 29) || (rn != 31 && rn != 29))
			return false;
		cpu->x[rt] = subtract ? cpu->x[rn] - immediate : cpu->x[rn] + immediate;
		return true;
	}
	return false;
}

static uint32_t instruction(const uint8_t *code, uint32_t offset)
{
	uint32_t insn;

	memcpy(&insn, code + offset, 4);
	return insn;
}

static void start(struct cpu *cpu)
{
	memset(cpu, 0, sizeof(*cpu));
	for (unsigned i = 0; i < 31; i++)
		cpu->x[i] = 0x1100 + i;
	cpu->x[31] = CALLER_SP;
	cpu->x[29] = CALLER_FP;
	cpu->x[30] = RETURN;
}

/* The step from the emulated state at `offset` of the function; true when
 * it gives back the caller's lr (unsigned), sp and x29. */
static bool steps_back(struct cpu *cpu, struct windows_unwind_code_at *at, uint32_t offset,
		       bool leaf)
{
	uint64_t low = CALLER_SP - 8 * STACK_WORDS;
	struct stack_copy stack = {.start = cpu->x[31],
				   .bytes = (const uint8_t *)cpu->stack + (cpu->x[31] - low),
				   .size = (size_t)(CALLER_SP - cpu->x[31])};
	struct frame_registers registers = {.machine = FRAME_MACHINE_AARCH64,
					    .ip = 0x1000 + offset,
					    .sp = cpu->x[31],
					    .bp = cpu->x[29],
					    .bp_known = true,
					    .lr = cpu->x[30],
					    .lr_known = leaf};

	at->offset = offset;
	return arm64_unwind_step(at, leaf, &stack, &registers) == FRAME_STEP_DONE &&
	       registers.ip == RETURN && registers.sp == CALLER_SP && registers.bp == CALLER_FP;
}

/* Counts of what was checked over a whole image. */
struct checked {
	size_t functions, emulated, prolog_steps, epilog_steps, wrong;
};

/* The prolog of a function: its first instructions while they are ones
 * that save registers or move sp and x29 (the unwind codes count them). */
static void check_function(const uint8_t *code, uint32_t length, struct windows_unwind_code_at *at,
			   uint32_t epilog_starts[], unsigned epilog_count, struct checked *checked)
{
	static struct cpu cpu, body;
	uint32_t prolog_end = 0;

	checked->functions++;
	/* Leaf steps at each prolog instruction; then a caller's frame. */
	start(&cpu);
	while (prolog_end < length) {
		if (!steps_back(&cpu, at, prolog_end, true)) {
			checked->wrong++;
			printf("wrong in the prolog at +%u\n", prolog_end);
			return;
		}
		checked->prolog_steps++;
		struct cpu before = cpu;

		if (!run(&cpu, instruction(code, prolog_end)) || cpu.failed) {
			cpu = before;
			break;
		}
		/* A prolog ends with its last register save or sp move: stop
		 * at the first instruction that is neither. */
		prolog_end += 4;
	}
	if (cpu.x[31] == CALLER_SP)
		return; /* a leaf that saves nothing: nothing more to see */
	checked->emulated++;
	if (!steps_back(&cpu, at, prolog_end + 4, false)) {
		checked->wrong++;
		printf("wrong in the body at +%u:", prolog_end + 4);
		for (uint32_t o = 0; o <= prolog_end + 4 && o < length; o += 4)
			printf(" %08x", instruction(code, o));
		printf(" | xdata");
		for (size_t k = 0; k < at->info_size; k++)
			printf(" %02x", at->info[k]);
		printf("\n");
		return;
	}
	body = cpu;
	/* Each epilog, from the state of the body: leaf steps at each of its
	 * instructions up to the ret. */
	for (unsigned e = 0; e < epilog_count; e++) {
		cpu = body;
		for (uint32_t offset = epilog_starts[e]; offset < length; offset += 4) {
			uint32_t insn = instruction(code, offset);

			if (!steps_back(&cpu, at, offset, true)) {
				checked->wrong++;
				printf("wrong in the epilog at +%u\n", offset);
				return;
			}
			checked->epilog_steps++;
			if (insn == 0xd65f03c0 || !run(&cpu, insn) || cpu.failed)
				break; /* ret, or an instruction not emulated */
		}
	}
}

static void test_every_corelib_method_unwinds(void **state)
{
	char pack[4096], path[4200];
	struct checked checked = {0};
	struct readytorun_runtime_function function;
	struct pe_image pe;
	struct readytorun r2r;
	uint8_t *data;
	size_t size;
	FILE *in;

	(void)state;
	if (!find_arm64_runtime_pack(pack, sizeof(pack)))
		skip();
	snprintf(path, sizeof(path), "%s/lib/net10.0/System.Private.CoreLib.dll", pack);
	assert_non_null(in = fopen(path, "rb"));
	fseek(in, 0, SEEK_END);
	size = (size_t)ftell(in);
	rewind(in);
	assert_non_null(data = malloc(size));
	assert_int_equal(fread(data, 1, size, in), size);
	fclose(in);
	assert_true(pe_image_parse(&pe, data, size, NULL));
	assert_true(readytorun_parse(&r2r, &pe));
	assert_int_equal(r2r.machine, FRAME_MACHINE_AARCH64);
	for (uint32_t i = 0; readytorun_runtime_function(&r2r, i, &function); i++) {
		struct windows_unwind_code_at at = {0};
		uint32_t length = function.end_rva - function.begin_rva, epilogs[32], header;
		unsigned epilog_count = 0;
		const uint8_t *code = pe_image_at_rva(&pe, function.begin_rva, length);

		assert_non_null(code);
		assert_true(readytorun_unwind_info(&r2r, &function, &at.info, &at.info_size));
		/* The epilogs' starts, from the scopes (or the one ending the
		 * function, found by its ret). */
		header = (uint32_t)at.info[0] | (uint32_t)at.info[1] << 8 |
			 (uint32_t)at.info[2] << 16 | (uint32_t)at.info[3] << 24;
		if (!(header >> 21 & 1) && (header >> 22 & 31) &&
		    at.info_size >= 4 + 4 * (header >> 22 & 31))
			for (unsigned e = 0; e < (header >> 22 & 31) && e < 32; e++) {
				uint32_t scope;

				memcpy(&scope, at.info + 4 + 4 * e, 4);
				epilogs[epilog_count++] = (scope & 0x3ffff) * 4;
			}
		check_function(code, length, &at, epilogs, epilog_count, &checked);
	}
	printf("CoreLib arm64: %zu functions, %zu with a frame emulated, %zu prolog and %zu "
	       "epilog steps, %zu wrong\n",
	       checked.functions, checked.emulated, checked.prolog_steps, checked.epilog_steps,
	       checked.wrong);
	assert_int_equal(checked.wrong, 0);
	assert_true(checked.emulated > checked.functions * 9 / 10);
	assert_true(checked.epilog_steps > checked.functions);
	free(data);
}

enum cfi_check { CFI_RIGHT, CFI_SILENT, CFI_WRONG };

/* The CFI step from the emulated state at `file_address`, as the walk
 * takes it for a leaf: right when it gives back the caller's lr
 * (unsigned), sp and x29; silent when the CFI describes no frame where the
 * code has pushed one (no FDE there, or an empty one: hand-written
 * assembly that says nothing), which is the file's gap, not the step's. */
static enum cfi_check cfi_step(struct call_frame_info *info, const struct cpu *cpu,
			       uint64_t file_address)
{
	uint64_t low = CALLER_SP - 8 * STACK_WORDS;
	struct stack_copy stack = {.start = cpu->x[31],
				   .bytes = (const uint8_t *)cpu->stack + (cpu->x[31] - low),
				   .size = (size_t)(CALLER_SP - cpu->x[31])};
	struct frame_registers registers = {.machine = FRAME_MACHINE_AARCH64,
					    .ip = file_address,
					    .sp = cpu->x[31],
					    .bp = cpu->x[29],
					    .bp_known = true,
					    .lr = cpu->x[30],
					    .lr_known = true};
	enum frame_step result = call_frame_info_step(info, file_address, &stack, &registers);

	if (result == FRAME_STEP_DONE &&
	    frame_return_address(FRAME_MACHINE_AARCH64, registers.ip) == RETURN &&
	    registers.sp == CALLER_SP && registers.bp == CALLER_FP)
		return CFI_RIGHT;
	if (result == FRAME_STEP_NO_RULE ||
	    (result == FRAME_STEP_DONE && registers.sp == cpu->x[31] && cpu->x[31] != CALLER_SP))
		return CFI_SILENT;
	return CFI_WRONG;
}

static uint32_t read32(const uint8_t *bytes)
{
	uint32_t value;

	memcpy(&value, bytes, 4);
	return value;
}

/* The file offset of code at `address`, through the PT_LOAD segments. */
static bool file_offset_of(const struct elf_file *file, uint64_t address, uint64_t *offset)
{
	for (size_t i = 0; i < file->segment_count; i++) {
		const struct load_segment *segment = &file->segments[i];

		if (address >= segment->address &&
		    address - segment->address < segment->file_size) {
			*offset = segment->file_offset + (address - segment->address);
			return true;
		}
	}
	return false;
}

/* Every function .eh_frame_hdr lists in libcoreclr.so: its prolog run on
 * the emulator, with a CFI step at each instruction and at the body's first. */
static void test_every_libcoreclr_function_unwinds(void **state)
{
	char pack[4096], path[4200];
	size_t checked = 0, steps = 0, wrong = 0, silent = 0, size;
	struct elf_file *file;
	struct call_frame_info *info;
	Elf_Scn *section = NULL;
	const uint8_t *hdr = NULL, *image;
	uint64_t hdr_address = 0;
	uint32_t count;
	static struct cpu cpu;
	FILE *in;
	uint8_t *data;

	(void)state;
	if (!find_arm64_runtime_pack(pack, sizeof(pack)))
		skip();
	snprintf(path, sizeof(path), "%s/native/libcoreclr.so", pack);
	assert_non_null(in = fopen(path, "rb"));
	fseek(in, 0, SEEK_END);
	size = (size_t)ftell(in);
	rewind(in);
	assert_non_null(data = malloc(size));
	assert_int_equal(fread(data, 1, size, in), size);
	fclose(in);
	image = data;
	assert_non_null(file = elf_file_open(open(path, O_RDONLY | O_CLOEXEC)));
	while ((section = elf_nextscn(file->elf, section))) {
		GElf_Shdr header;
		size_t names;

		if (gelf_getshdr(section, &header) && elf_getshdrstrndx(file->elf, &names) == 0 &&
		    !strcmp(elf_strptr(file->elf, names, header.sh_name), ".eh_frame_hdr")) {
			hdr = image + header.sh_offset;
			hdr_address = header.sh_addr;
		}
	}
	/* version 1, pcrel sdata4 .eh_frame pointer, udata4 count, a table of
	 * datarel sdata4 pairs (what the linkers write) */
	assert_non_null(hdr);
	assert_int_equal(read32(hdr), 0x3b031b01);
	count = read32(hdr + 8);
	assert_non_null(info = call_frame_info_open(file));
	for (uint32_t i = 0; i < count; i++) {
		uint64_t begin = hdr_address + (uint64_t)(int64_t)(int32_t)read32(hdr + 12 + 8 * i);
		uint64_t offset = 0, next = i + 1 < count
						? hdr_address + (uint64_t)(int64_t)(int32_t)read32(
								    hdr + 12 + 8 * (i + 1))
						: begin + 4;

		assert_true(file_offset_of(file, begin, &offset));
		checked++;
		start(&cpu);
		for (uint64_t at = begin; at < next && offset + (at - begin) + 4 <= size; at += 4) {
			struct cpu before = cpu;

			enum cfi_check check = cfi_step(info, &cpu, at);

			if (check != CFI_RIGHT) {
				silent += check == CFI_SILENT;
				wrong += check == CFI_WRONG;
				printf("%s at %#" PRIx64 " (+%" PRIu64 ")\n",
				       check == CFI_SILENT ? "no CFI" : "wrong", at, at - begin);
				break;
			}
			steps++;
			if (!run(&cpu, read32(image + offset + (at - begin))) || cpu.failed) {
				cpu = before;
				break;
			}
		}
	}
	printf("libcoreclr arm64: %zu functions, %zu steps right, %zu without CFI, %zu wrong\n",
	       checked, steps, silent, wrong);
	assert_int_equal(wrong, 0);
	assert_true(silent < checked / 100);
	assert_true(checked > 1000);
	assert_true(steps > 3 * checked);
	call_frame_info_free(info);
	free(data);
}

/* A packed word's fields (Flag 1: a function with the canonical prolog). */
static uint32_t packed(uint32_t length, unsigned reg_f, unsigned reg_i, unsigned homes, unsigned cr,
		       uint32_t frame_size)
{
	return 1 | length / 4 << 2 | reg_f << 13 | reg_i << 16 | homes << 20 | cr << 21 |
	       frame_size / 16 << 23;
}

/* Functions whose canonical prolog and epilog are written out here as the
 * format describes them, for each way of saving lr (CR). */
static void test_packed_unwind_data(void **state)
{
	/* CR 3 (chained), x19 and x20 saved, 32 bytes of locals. */
	static const uint32_t chained[] = {
	    0xa9bf53f3, /* stp x19, x20, [sp, #-16]! */
	    0xa9be7bfd, /* stp x29, lr, [sp, #-32]! */
	    0x910003fd, /* mov x29, sp */
	    0x94000000, /* bl: the body, a call */
	    0xa8c27bfd, /* ldp x29, lr, [sp], #32 */
	    0xa8c153f3, /* ldp x19, x20, [sp], #16 */
	    0xd65f03c0, /* ret */
	};
	/* CR 2: the same with a signed return address. */
	static const uint32_t signed_chained[] = {
	    0xd503237f, /* pacibsp */
	    0xa9bf53f3, 0xa9be7bfd, 0x910003fd, 0x94000000,
	    0xa8c27bfd, 0xa8c153f3, 0xd50323ff, /* autibsp */
	    0xd65f03c0,
	};
	/* CR 1 (unchained, lr saved beside x19), 16 bytes of locals. */
	static const uint32_t unchained[] = {
	    0xa9bf7bf3, /* stp x19, lr, [sp, #-16]! */
	    0xd10043ff, /* sub sp, sp, #16 */
	    0x94000000, /* bl */
	    0x910043ff, /* add sp, sp, #16 */
	    0xa8c17bf3, /* ldp x19, lr, [sp], #16 */
	    0xd65f03c0, /* ret */
	};
	/* CR 0: a leaf that saves nothing, lr kept. */
	static const uint32_t leaf[] = {0xd503201f, 0xd65f03c0};
	struct {
		const uint32_t *code;
		uint32_t length, word, epilog;
	} functions[] = {
	    {chained, sizeof(chained), packed(sizeof(chained), 0, 2, 0, 3, 48), 16},
	    {signed_chained, sizeof(signed_chained), packed(sizeof(signed_chained), 0, 2, 0, 2, 48),
	     20},
	    {unchained, sizeof(unchained), packed(sizeof(unchained), 0, 1, 0, 1, 32), 12},
	    {leaf, sizeof(leaf), packed(sizeof(leaf), 0, 0, 0, 0, 0), 4},
	};
	struct checked checked = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(functions) / sizeof(*functions); i++) {
		struct windows_unwind_code_at at = {.packed = functions[i].word};

		assert_int_equal(arm64_unwind_function_length(&at), functions[i].length);
		check_function((const uint8_t *)functions[i].code, functions[i].length, &at,
			       &functions[i].epilog, 1, &checked);
	}
	assert_int_equal(checked.wrong, 0);
	assert_int_equal(checked.emulated, 3);
	/* A step at each prolog instruction and at the body's first. */
	assert_int_equal(checked.prolog_steps, 4 + 5 + 3 + 2);
	assert_int_equal(checked.epilog_steps, 3 + 4 + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_corelib_method_unwinds),
	    cmocka_unit_test(test_packed_unwind_data),
	    cmocka_unit_test(test_every_libcoreclr_function_unwinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
