/* The call frame information of one function, from the input: its CIE's
 * and its FDE's instructions in an .eh_frame of a small ELF file, then a
 * step from a few addresses of the function over a stack copy from the
 * input, every register known. fuzz_elf reaches the same code through
 * whole files, where a mutation rarely makes a CFI row of a new form; here
 * every byte is a CFI instruction or its operand, so every CFA form (a
 * register of any number plus an offset, an expression) and every register
 * rule is reached.
 *
 * The input: a byte of flags (bit 0: arm64, else x86-64; bit 1: a signal
 * frame, augmentation 'S'), the CIE's instructions (a length byte, then
 * them), the FDE's (the same), then the stack copy. The function covers
 * file addresses 0x1000 to 0x1100. */
#include "call_frame_info.h"
#include "fuzz_input.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CODE_START  0x1000
#define CODE_SIZE   0x100
#define STACK_START 0x7ffc0000

struct bytes {
	uint8_t data[1024];
	size_t length;
};

static void put(struct bytes *out, const void *data, size_t length)
{
	memcpy(out->data + out->length, data, length);
	out->length += length;
}

static void put_u32(struct bytes *out, uint32_t value)
{
	put(out, &value, sizeof(value));
}

/* Pads a CIE or FDE that started at `start` (its length field) with
 * DW_CFA_nop to a multiple of 4 bytes and writes its length. */
static void close_entry(struct bytes *out, size_t start)
{
	uint32_t length;

	while ((out->length - start) % 4)
		out->data[out->length++] = 0;
	length = (uint32_t)(out->length - start - 4);
	memcpy(out->data + start, &length, sizeof(length));
}

/* The .eh_frame: one CIE ("zR" or "zRS": FDE addresses as absolute 4-byte
 * values; code alignment 1, data alignment -8 as gcc writes for both
 * machines), one FDE. */
static void build_eh_frame(struct bytes *out, bool arm64, bool signal_frame, const uint8_t *cie,
			   size_t cie_length, const uint8_t *fde, size_t fde_length)
{
	const char *augmentation = signal_frame ? "zRS" : "zR";
	uint8_t alignment[3] = {1, 0x78, arm64 ? 30 : 16};
	size_t fde_start;

	put_u32(out, 0); /* the length, written last */
	put_u32(out, 0); /* the CIE id */
	put(out, "\1", 1);
	put(out, augmentation, strlen(augmentation) + 1);
	put(out, alignment, sizeof(alignment));
	put(out, "\1\3", 2); /* augmentation data: 1 byte, DW_EH_PE_udata4 */
	put(out, cie, cie_length);
	close_entry(out, 0);

	fde_start = out->length;
	put_u32(out, 0);
	put_u32(out, (uint32_t)(out->length)); /* back to the CIE, from this field */
	put_u32(out, CODE_START);
	put_u32(out, CODE_SIZE);
	put(out, "\0", 1); /* no augmentation data */
	put(out, fde, fde_length);
	close_entry(out, fde_start);
	put_u32(out, 0); /* the terminator */
}

/* An ELF file of `machine` holding `eh_frame` as its .eh_frame. */
static void build_elf(struct bytes *file, uint16_t machine, const struct bytes *eh_frame)
{
	static const char names[] = "\0.eh_frame\0.shstrtab";
	Elf64_Ehdr header = {
	    .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT},
	    .e_type = ET_DYN,
	    .e_machine = machine,
	    .e_version = EV_CURRENT,
	    .e_ehsize = sizeof(Elf64_Ehdr),
	    .e_shentsize = sizeof(Elf64_Shdr),
	    .e_shnum = 3,
	    .e_shstrndx = 2,
	};
	size_t names_offset = sizeof(header) + eh_frame->length;
	Elf64_Shdr sections[3] = {
	    {0},
	    {.sh_name = 1,
	     .sh_type = SHT_PROGBITS,
	     .sh_flags = SHF_ALLOC,
	     .sh_addr = 0x2000,
	     .sh_offset = sizeof(header),
	     .sh_size = eh_frame->length,
	     .sh_addralign = 8},
	    {.sh_name = 11,
	     .sh_type = SHT_STRTAB,
	     .sh_offset = names_offset,
	     .sh_size = sizeof(names),
	     .sh_addralign = 1},
	};

	header.e_shoff = (names_offset + sizeof(names) + 7) & ~(size_t)7;
	file->length = 0;
	put(file, &header, sizeof(header));
	put(file, eh_frame->data, eh_frame->length);
	put(file, names, sizeof(names));
	file->length = header.e_shoff;
	put(file, sections, sizeof(sections));
}

static struct bytes eh_frame, file;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t offsets[] = {0, 1, 2, 3, 4, 8, 16, 64, 255};
	const uint8_t *cie, *fde, *end = data + size;
	size_t cie_length, fde_length;
	bool arm64, signal_frame;
	struct call_frame_info *info;
	struct elf_file *elf;
	char path[32];
	int fd;

	if (size < 3)
		return 0;
	arm64 = data[0] & 1;
	signal_frame = data[0] & 2;
	cie_length = data[1];
	cie = data + 2;
	if ((size_t)(end - cie) < cie_length + 1)
		return 0;
	fde_length = cie[cie_length];
	fde = cie + cie_length + 1;
	if ((size_t)(end - fde) < fde_length)
		return 0;
	eh_frame.length = 0;
	build_eh_frame(&eh_frame, arm64, signal_frame, cie, cie_length, fde, fde_length);
	build_elf(&file, arm64 ? EM_AARCH64 : EM_X86_64, &eh_frame);
	fd = fuzz_input_file(file.data, file.length, path);
	/* The ELF file takes a descriptor of its own, and call_frame_info
	 * the file. */
	elf = elf_file_open(dup(fd));
	close(fd);
	if (!(info = call_frame_info_open(elf))) {
		elf_file_close(elf);
		return 0;
	}
	for (size_t i = 0; i < sizeof(offsets) / sizeof(*offsets); i++) {
		/* Twice: once from libdw, once from the rules kept. */
		for (int pass = 0; pass < 2; pass++) {
			struct stack_copy stack = {.start = STACK_START,
						   .bytes = fde + fde_length,
						   .size = (size_t)(end - fde - fde_length)};
			struct general_registers general = {.known = UINT32_MAX};
			struct frame_registers registers = {.ip = CODE_START + offsets[i],
							    .sp = STACK_START,
							    .bp = STACK_START + 16,
							    .bp_known = true,
							    .lr = 0x4000,
							    .lr_known = true,
							    .interrupted = pass == 0,
							    .machine = arm64 ? FRAME_MACHINE_AARCH64
									     : FRAME_MACHINE_X86_64,
							    .general = &general};

			for (unsigned regno = 0; regno < FRAME_GENERAL_REGISTERS; regno++)
				general.values[regno] = STACK_START + 8 * regno;
			call_frame_info_step(info, CODE_START + offsets[i], &stack, &registers);
		}
	}
	call_frame_info_free(info);
	return 0;
}
