#include "cfi_registers.h"

#include <dwarf.h>
#include <string.h>

struct reader {
	const uint8_t *at, *end;
	bool failed;
};

static uint64_t read_bytes(struct reader *in, size_t count)
{
	uint64_t value = 0;

	if (in->failed || (size_t)(in->end - in->at) < count) {
		in->failed = true;
		return 0;
	}
	for (size_t i = 0; i < count; i++)
		value |= (uint64_t)in->at[i] << (8 * i);
	in->at += count;
	return value;
}

/* An unsigned or signed LEB128 number; a register number's value is all
 * that is used. */
static uint64_t read_leb128(struct reader *in)
{
	uint64_t value = 0;

	for (unsigned shift = 0; !in->failed; shift += 7) {
		uint8_t byte = (uint8_t)read_bytes(in, 1);

		if (shift < 64)
			value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			break;
	}
	return value;
}

static void skip(struct reader *in, uint64_t count)
{
	if (in->failed || (uint64_t)(in->end - in->at) < count)
		in->failed = true;
	else
		in->at += count;
}

/* The size of a pointer of DW_EH_PE encoding `encoding`; 0 for a LEB128. */
static size_t encoded_size(uint8_t encoding)
{
	switch (encoding & 0x0f) {
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		return 0;
	default: /* DW_EH_PE_absptr, udata8, sdata8 */
		return 8;
	}
}

static void skip_encoded(struct reader *in, uint8_t encoding)
{
	size_t size = encoded_size(encoding);

	if (size)
		skip(in, size);
	else
		read_leb128(in);
}

static bool bounded(uint64_t regno)
{
	return regno <= CFI_MAX_REGISTER;
}

/* The instructions from `in` on (DWARF 5, 6.4.2): false at a register
 * past the bound. `pointer_encoding` sizes DW_CFA_set_loc's operand. */
static bool instructions_bounded(struct reader *in, uint8_t pointer_encoding)
{
	while (!in->failed && in->at < in->end) {
		uint8_t op = (uint8_t)read_bytes(in, 1);

		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc, DW_CFA_restore: the register in the op */
		case 3:
			continue;
		case 2: /* DW_CFA_offset */
			read_leb128(in);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			skip_encoded(in, pointer_encoding);
			break;
		case DW_CFA_advance_loc1:
			skip(in, 1);
			break;
		case DW_CFA_advance_loc2:
			skip(in, 2);
			break;
		case DW_CFA_advance_loc4:
			skip(in, 4);
			break;
		case DW_CFA_MIPS_advance_loc8:
			skip(in, 8);
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			read_leb128(in);
			break;
		case DW_CFA_def_cfa_expression:
			skip(in, read_leb128(in));
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!bounded(read_leb128(in)))
				return false;
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (!bounded(read_leb128(in)))
				return false;
			read_leb128(in);
			break;
		case DW_CFA_register:
			if (!bounded(read_leb128(in)) || !bounded(read_leb128(in)))
				return false;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!bounded(read_leb128(in)))
				return false;
			skip(in, read_leb128(in));
			break;
		default:
			return true; /* libdw stops at it too */
		}
	}
	return true;
}

/* What an FDE needs of its CIE: how its addresses are encoded and whether
 * augmentation data follows them. */
struct cie {
	uint8_t pointer_encoding;
	bool has_augmentation_data;
};

/* Reads the header of the CIE in `in` (after its id) into `cie`, up to its
 * instructions; false at a return address column past the bound. */
static bool cie_header(struct reader *in, bool is_eh_frame, struct cie *cie)
{
	uint8_t version = (uint8_t)read_bytes(in, 1);
	const char *augmentation = (const char *)in->at;
	size_t length = strnlen(augmentation, (size_t)(in->end - in->at));
	struct reader data;

	*cie = (struct cie){.pointer_encoding = is_eh_frame ? DW_EH_PE_absptr : DW_EH_PE_udata8};
	skip(in, length + 1);
	if (length >= 2 && !memcmp(augmentation, "eh", 2))
		skip(in, 8);
	if (version >= 4)
		skip(in, 2); /* address and segment selector sizes */
	read_leb128(in);     /* code alignment */
	read_leb128(in);     /* data alignment */
	if (!bounded(version == 1 ? read_bytes(in, 1) : read_leb128(in)))
		return false;
	if (length && augmentation[0] == 'z') {
		uint64_t size = read_leb128(in);

		data = (struct reader){in->at, in->at, false};
		skip(in, size);
		data.end = in->at;
		cie->has_augmentation_data = true;
		for (size_t i = 1; i < length && !data.failed; i++) {
			if (augmentation[i] == 'R')
				cie->pointer_encoding = (uint8_t)read_bytes(&data, 1);
			else if (augmentation[i] == 'L')
				skip(&data, 1);
			else if (augmentation[i] == 'P')
				skip_encoded(&data, (uint8_t)read_bytes(&data, 1));
		}
	}
	return true;
}

bool cfi_registers_bounded(const uint8_t *bytes, size_t size, bool is_eh_frame)
{
	struct reader section = {bytes, bytes + size, false};

	while (!section.failed && section.at < section.end) {
		const uint8_t *start = section.at;
		uint64_t length = read_bytes(&section, 4), id;
		bool wide = length == 0xffffffff;
		struct reader entry;
		struct cie cie;

		if (wide)
			length = read_bytes(&section, 8);
		if (length == 0 || section.failed)
			continue; /* .eh_frame's terminator, or a zero-length entry */
		if ((uint64_t)(section.end - section.at) < length)
			return true; /* libdw reads no further either */
		entry = (struct reader){section.at, section.at + length, false};
		section.at += length;
		id = read_bytes(&entry, wide ? 8 : 4);
		if (is_eh_frame ? id == 0 : id == (wide ? UINT64_MAX : 0xffffffff)) {
			if (!cie_header(&entry, is_eh_frame, &cie) ||
			    (!entry.failed && !instructions_bounded(&entry, cie.pointer_encoding)))
				return false;
			continue;
		}
		/* An FDE: its CIE, found by the pointer back (.eh_frame) or the
		 * offset in the section (.debug_frame). */
		{
			uint64_t cie_offset =
			    is_eh_frame ? (uint64_t)(start - bytes) + (wide ? 12 : 4) - id : id;
			struct reader cie_entry;
			uint64_t cie_length;

			if (cie_offset >= size)
				continue;
			cie_entry = (struct reader){bytes + cie_offset, section.end, false};
			bool cie_wide;

			cie_length = read_bytes(&cie_entry, 4);
			cie_wide = cie_length == 0xffffffff;
			if (cie_wide)
				cie_length = read_bytes(&cie_entry, 8);
			if (cie_entry.failed ||
			    (uint64_t)(cie_entry.end - cie_entry.at) < cie_length)
				continue;
			cie_entry.end = cie_entry.at + cie_length;
			read_bytes(&cie_entry, cie_wide ? 8 : 4); /* its id */
			/* Its instructions are checked as an entry of their own. */
			if (!cie_header(&cie_entry, is_eh_frame, &cie))
				return false;
		}
		skip_encoded(&entry, cie.pointer_encoding); /* the start */
		skip_encoded(&entry, cie.pointer_encoding); /* the length */
		if (cie.has_augmentation_data)
			skip(&entry, read_leb128(&entry));
		if (!entry.failed && !instructions_bounded(&entry, cie.pointer_encoding))
			return false;
	}
	return true;
}
