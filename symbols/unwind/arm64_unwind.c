#include "arm64_unwind.h"
#include "little_endian.h"

/* Unwind codes a run may hold: .NET's prologs take a dozen at most. */
#define MAX_UNDOS 64
/* The xdata header's version field (always 0) and the packed word's Flag. */
#define PACKED_FLAG_FRAGMENT 2
#define PACKED_FLAG_RESERVED 3
/* The packed word's CR: how lr and x29 are saved. */
enum { CR_UNCHAINED = 0, CR_UNCHAINED_SAVED_LR = 1, CR_CHAINED_SIGNED = 2, CR_CHAINED = 3 };

/* What undoing one prolog instruction does to the registers a walk tracks:
 * x29 and lr are read from their slots above sp, then sp moves up by what
 * the instruction took, or back to x29 minus an offset. */
struct undo {
	int32_t fp_slot, lr_slot; /* from sp; -1: not saved by this instruction */
	uint32_t sp_add;
	bool sp_from_fp;
	uint32_t fp_offset;
};

/* The registers while a step undoes the prolog. */
struct unwinding {
	uint64_t sp, fp, lr;
	bool fp_known, lr_saved;
};

static const struct undo no_change = {-1, -1, 0, false, 0};

/* Decodes the unwind code at codes[*at] into `undo`, moving *at past it.
 * False for a code the step does not follow or one cut short; `end` is set
 * by end and end_c. */
static bool decode_code(const uint8_t *codes, size_t size, size_t *at, struct undo *undo, bool *end)
{
	uint8_t b = codes[*at], b1 = 0;
	size_t length = 1;

	*undo = no_change;
	*end = false;
	if (b >= 0xc0 && b != 0xe1 && b != 0xe3 && b != 0xe4 && b != 0xe5 && b != 0xe6 && b != 0xfc)
		length = b == 0xe0 ? 4 : b == 0xe7 ? 3 : 2;
	if ((b >= 0xe8 && b != 0xfc) || b == 0xdf || size - *at < length)
		return false; /* custom frames, SVE, reserved; or cut short */
	if (length > 1)
		b1 = codes[*at + 1];
	*at += length;
	if (b < 0x20) /* alloc_s */
		undo->sp_add = (b & 0x1fu) * 16;
	else if (b < 0x40) /* save_r19r20_x */
		undo->sp_add = (b & 0x1fu) * 8;
	else if (b < 0x80) { /* save_fplr */
		undo->fp_slot = (b & 0x3f) * 8;
		undo->lr_slot = undo->fp_slot + 8;
	} else if (b < 0xc0) { /* save_fplr_x */
		undo->fp_slot = 0;
		undo->lr_slot = 8;
		undo->sp_add = ((b & 0x3fu) + 1) * 8;
	} else if ((b & 0xf8) == 0xc0) /* alloc_m */
		undo->sp_add = (((b & 7u) << 8) | b1) * 16;
	else if ((b & 0xfc) == 0xcc || (b & 0xfe) == 0xda) /* save_regp_x, save_fregp_x */
		undo->sp_add = ((b1 & 0x3fu) + 1) * 8;
	else if ((b & 0xfe) == 0xd4 || b == 0xde) /* save_reg_x, save_freg_x */
		undo->sp_add = ((b1 & 0x1fu) + 1) * 8;
	else if ((b & 0xfe) == 0xd6) /* save_lrpair: <x(19 + 2X), lr> */
		undo->lr_slot = (b1 & 0x3f) * 8 + 8;
	else if (b == 0xe0) /* alloc_l */
		undo->sp_add =
		    ((uint32_t)b1 << 16 | (uint32_t)codes[*at - 2] << 8 | codes[*at - 1]) * 16;
	else if (b == 0xe1 || b == 0xe2) { /* set_fp, add_fp */
		undo->sp_from_fp = true;
		undo->fp_offset = b == 0xe2 ? b1 * 8u : 0;
	} else if (b == 0xe4 || b == 0xe5) /* end, end_c */
		*end = true;
	else if (b == 0xe7 && (b1 & 0x20)) /* save_any_reg with write-back */
		return false;
	/* the rest save registers the walk does not track, or nothing (nop,
	 * save_next, pac_sign_lr) */
	return true;
}

/* The undos of the codes from codes[start] to the next end (or the end of
 * the codes), in the order listed: the reverse of the instructions'. */
static bool decode_run(const uint8_t *codes, size_t size, size_t start, struct undo *undos,
		       size_t *count)
{
	size_t at = start;
	bool end = false;

	*count = 0;
	while (at < size) {
		struct undo undo;

		if (!decode_code(codes, size, &at, &undo, &end))
			return false;
		if (end)
			return true;
		if (*count == MAX_UNDOS)
			return false;
		undos[(*count)++] = undo;
	}
	return true;
}

static bool undo_all(const struct undo *undos, size_t count, const struct stack_copy *stack,
		     struct unwinding *state)
{
	for (size_t i = 0; i < count; i++) {
		const struct undo *undo = &undos[i];

		if (undo->sp_from_fp) {
			if (!state->fp_known)
				return false;
			state->sp = state->fp - undo->fp_offset;
		}
		if (undo->fp_slot >= 0) {
			if (!stack_copy_read(stack, state->sp + (uint64_t)undo->fp_slot,
					     &state->fp))
				return false;
			state->fp_known = true;
		}
		if (undo->lr_slot >= 0) {
			if (!stack_copy_read(stack, state->sp + (uint64_t)undo->lr_slot,
					     &state->lr))
				return false;
			state->lr_saved = true;
		}
		state->sp += undo->sp_add;
	}
	return true;
}

/* The .xdata header's fields. */
struct xdata {
	uint32_t function_length; /* bytes */
	const uint8_t *scopes;	  /* epilog scopes, 4 bytes each */
	unsigned scope_count;
	bool single_epilog; /* E: no scopes; the one epilog ends the function */
	unsigned single_epilog_index;
	const uint8_t *codes;
	size_t code_size, size;
};

/* The header words' fields; x->size may lie past `available`. */
static bool parse_xdata_header(const uint8_t *info, size_t available, struct xdata *x)
{
	uint32_t header, epilog_count, code_words;
	size_t at = 4;

	if (!info || available < 4)
		return false;
	header = read_u32(info);
	if ((header >> 18 & 3) != 0) /* Vers */
		return false;
	x->function_length = (header & 0x3ffff) * 4;
	x->single_epilog = header >> 21 & 1;
	epilog_count = header >> 22 & 0x1f;
	code_words = header >> 27;
	if (epilog_count == 0 && code_words == 0) {
		if (available < 8)
			return false;
		epilog_count = read_u32(info + 4) & 0xffff;
		code_words = read_u32(info + 4) >> 16 & 0xff;
		at = 8;
	}
	x->scope_count = x->single_epilog ? 0 : epilog_count;
	x->single_epilog_index = x->single_epilog ? epilog_count : 0;
	x->scopes = info + at;
	at += 4 * (size_t)x->scope_count;
	x->codes = info + at;
	x->code_size = 4 * (size_t)code_words;
	x->size = at + x->code_size;
	return true;
}

static bool parse_xdata(const uint8_t *info, size_t available, struct xdata *x)
{
	return parse_xdata_header(info, available, x) && x->size <= available;
}

size_t arm64_unwind_xdata_size(const uint8_t *info, size_t available)
{
	struct xdata x;

	return parse_xdata_header(info, available, &x) ? x.size : 0;
}

/* The undos of a packed word's canonical prolog ("Packed unwind data" of
 * Microsoft's ARM64 exception handling documentation), in unwind order. */
static bool packed_undos(uint32_t word, struct undo *undos, size_t *count, size_t *set_fp_undos)
{
	unsigned reg_f = word >> 13 & 7, reg_i = word >> 16 & 0xf, homes = word >> 20 & 1,
		 cr = word >> 21 & 3;
	uint32_t frame = (word >> 23 & 0x1ff) * 16, saved, locals;
	unsigned int_stores = (reg_i + (cr == CR_UNCHAINED_SAVED_LR) + 1) / 2,
		 fp_stores = reg_f ? (reg_f + 2) / 2 : 0, save_stores = int_stores + fp_stores;
	struct undo prolog[MAX_UNDOS];
	size_t n = 0;

	saved = (8 * reg_i + (cr == CR_UNCHAINED_SAVED_LR ? 8 : 0) + (reg_f ? 8 * (reg_f + 1) : 0) +
		 (homes ? 64 : 0) + 15) &
		~15u;
	if ((word & 3) == PACKED_FLAG_RESERVED || (word & 3) == 0 || saved > frame)
		return false;
	locals = frame - saved;
	if (cr == CR_CHAINED_SIGNED)
		prolog[n++] = no_change; /* pacibsp */
	/* The first store of the save area allocates all of it. */
	for (unsigned i = 0; i < save_stores + (homes ? 4 : 0); i++) {
		prolog[n] = no_change;
		prolog[n].sp_add = i == 0 ? saved : 0;
		if (i == int_stores - 1 && cr == CR_UNCHAINED_SAVED_LR)
			prolog[n].lr_slot = (int32_t)(8 * reg_i);
		n++;
	}
	if (cr == CR_CHAINED || cr == CR_CHAINED_SIGNED) {
		struct undo frame_record = {0, 8, 0, false, 0};

		if (locals <= 512) {
			frame_record.sp_add = locals; /* stp x29, lr, [sp, #-locals]! */
			prolog[n++] = frame_record;
		} else {
			prolog[n] = no_change;
			prolog[n++].sp_add = locals <= 4080 ? locals : 4080;
			if (locals > 4080) {
				prolog[n] = no_change;
				prolog[n++].sp_add = locals - 4080;
			}
			prolog[n++] = frame_record;
		}
		prolog[n] = no_change;
		prolog[n++].sp_from_fp = true; /* mov x29, sp */
		*set_fp_undos = 1;
	} else {
		*set_fp_undos = 0;
		if (locals) {
			prolog[n] = no_change;
			prolog[n++].sp_add = locals <= 4080 ? locals : 4080;
		}
		if (locals > 4080) {
			prolog[n] = no_change;
			prolog[n++].sp_add = locals - 4080;
		}
	}
	for (size_t i = 0; i < n; i++)
		undos[i] = prolog[n - 1 - i];
	*count = n;
	return true;
}

uint32_t arm64_unwind_function_length(const struct windows_unwind_code_at *at)
{
	struct xdata x;

	if (!at->info)
		return (at->packed >> 2 & 0x7ff) * 4;
	return parse_xdata(at->info, at->info_size, &x) ? x.function_length : 0;
}

/* The undos still to run for a leaf sampled at `offset` of an epilog that
 * starts at `start` and runs `count` undos then ret: those of the
 * instructions not run yet. False when the offset is not in it. */
static bool in_epilog(uint32_t offset, uint32_t start, size_t count, size_t *first)
{
	if (offset < start || offset - start > 4 * count)
		return false;
	*first = (offset - start) / 4;
	return true;
}

/* Which undos apply: all of the prolog's, but for a leaf in the prolog
 * (those of the instructions run) or in an epilog (the epilog's not run). */
static bool undos_at(const struct windows_unwind_code_at *at, bool leaf, struct undo *undos,
		     size_t *count, size_t *first)
{
	struct xdata x;
	uint32_t length;
	size_t set_fp_undos;

	*first = 0;
	if (!at->info) {
		if (!packed_undos(at->packed, undos, count, &set_fp_undos))
			return false;
		length = arm64_unwind_function_length(at);
		if (!leaf)
			return true;
		if ((at->packed & 3) != PACKED_FLAG_FRAGMENT && at->offset < 4 * *count) {
			*first = *count - at->offset / 4;
			return true;
		}
		/* The epilog mirrors the prolog but for mov x29, sp, and ends
		 * the function. */
		size_t epilog = *count - set_fp_undos;
		if (length >= 4 * (epilog + 1) &&
		    in_epilog(at->offset, length - 4 * (uint32_t)(epilog + 1), epilog, first)) {
			*first += set_fp_undos;
		}
		return true;
	}
	if (!parse_xdata(at->info, at->info_size, &x) ||
	    !decode_run(x.codes, x.code_size, 0, undos, count))
		return false;
	if (!leaf)
		return true;
	if (at->offset < 4 * *count) {
		*first = *count - at->offset / 4;
		return true;
	}
	for (unsigned i = 0; i < x.scope_count + x.single_epilog; i++) {
		uint32_t scope = x.single_epilog ? 0 : read_u32(x.scopes + 4 * i);
		size_t index = x.single_epilog ? x.single_epilog_index : scope >> 22, epilog_count;
		struct undo epilog[MAX_UNDOS];
		uint32_t start;

		if (index >= x.code_size ||
		    !decode_run(x.codes, x.code_size, index, epilog, &epilog_count))
			return false;
		start = x.single_epilog ? x.function_length - 4 * (uint32_t)(epilog_count + 1)
					: (scope & 0x3ffff) * 4;
		if (x.function_length >= 4 * (epilog_count + 1) &&
		    in_epilog(at->offset, start, epilog_count, first)) {
			for (size_t k = 0; k < epilog_count; k++)
				undos[k] = epilog[k];
			*count = epilog_count;
			return true;
		}
	}
	return true;
}

enum frame_step arm64_unwind_step(const struct windows_unwind_code_at *at, bool leaf,
				  const struct stack_copy *stack, struct frame_registers *registers)
{
	struct undo undos[MAX_UNDOS];
	struct unwinding state = {registers->sp, registers->bp, 0, registers->bp_known, false};
	size_t count, first;

	if (registers->machine != FRAME_MACHINE_AARCH64 ||
	    !undos_at(at, leaf, undos, &count, &first))
		return FRAME_STEP_NO_RULE;
	if (first > count || !undo_all(undos + first, count - first, stack, &state))
		return FRAME_STEP_FAILED;
	if (!state.lr_saved) {
		/* A leaf that has not saved lr (or never does) returns to it. */
		if (!leaf || !registers->lr_known)
			return FRAME_STEP_FAILED;
		state.lr = registers->lr;
	}
	registers->ip = frame_return_address(FRAME_MACHINE_AARCH64, state.lr);
	registers->sp = state.sp;
	registers->bp = state.fp;
	registers->bp_known = state.fp_known;
	registers->lr_known = false;
	return FRAME_STEP_DONE;
}
