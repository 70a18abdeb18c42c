#include "call_frame_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF numbers of the registers a step reads, by machine: the
 * System V x86-64 psABI (figure 3.36) and the DWARF for the Arm 64-bit
 * Architecture (AADWARF64). */
struct dwarf_registers {
	enum frame_machine machine;
	int stack_pointer, frame_pointer;
};

static const struct dwarf_registers x86_64_registers = {FRAME_MACHINE_X86_64, 7, 6};
static const struct dwarf_registers aarch64_registers = {FRAME_MACHINE_AARCH64, 31, 29};

/* User addresses on arm64: 48 bits; above them, a pointer's signature or tag. */
#define AARCH64_USER_ADDRESS_MASK ((1ULL << 48) - 1)

uint64_t frame_return_address(enum frame_machine machine, uint64_t value)
{
	return machine == FRAME_MACHINE_AARCH64 ? value & AARCH64_USER_ADDRESS_MASK : value;
}

/* How far past the ELF entry point its code runs without a caller: the
 * dynamic loader's _start, which calls _dl_start and then _dl_init from
 * the process's first stack, has no CFI (64 bytes of it on x86-64). */
#define ENTRY_CODE_SIZE 128

struct call_frame_info {
	struct elf_file *file;
	uint64_t entry;				 /* the ELF header's entry point */
	const struct dwarf_registers *registers; /* the file's machine's */
	Dwarf_CFI *eh_frame;			 /* dwarf_getcfi_elf's: ended with dwarf_cfi_end */
	Dwarf *debug_info;	   /* owns the .debug_frame CFI when there is no eh_frame */
	Dwarf_CFI *cfi;		   /* the one in use */
	struct frame_rules *rules; /* RULES_CACHED of them, by address; NULL until a step */
};

bool stack_copy_read(const struct stack_copy *copy, uint64_t address, uint64_t *value)
{
	uint64_t offset = address - copy->start;

	if (address < copy->start || copy->size < sizeof(*value) ||
	    offset > copy->size - sizeof(*value))
		return false;
	memcpy(value, copy->bytes + offset, sizeof(*value));
	if (copy->reads) {
		if (copy->reads->end < offset + sizeof(*value))
			copy->reads->end = (size_t)offset + sizeof(*value);
		if (copy->reads->count < STACK_READS_LISTED)
			copy->reads->offsets[copy->reads->count] = (uint32_t)offset;
		copy->reads->count++;
	}
	return true;
}

struct call_frame_info *call_frame_info_open(struct elf_file *file)
{
	struct call_frame_info *info;
	GElf_Ehdr header;

	const struct dwarf_registers *registers;

	if (!file || !gelf_getehdr(file->elf, &header))
		return NULL;
	if (header.e_machine == EM_X86_64)
		registers = &x86_64_registers;
	else if (header.e_machine == EM_AARCH64)
		registers = &aarch64_registers;
	else
		return NULL;
	if (!(info = calloc(1, sizeof(*info))))
		return NULL;
	info->registers = registers;
	info->entry = header.e_entry;
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
	free(info->rules);
	free(info);
}

/* How a step finds a caller's register: unchanged (same_value), undefined
 * (the outermost frame's return address), saved at the CFA plus an offset
 * (offset(N)), the CFA plus an offset itself (val_offset(N)), or by a rule
 * this step does not follow. */
enum rule_kind { RULE_SAME, RULE_UNDEFINED, RULE_SAVED_AT, RULE_VALUE, RULE_UNSUPPORTED };

struct register_rule {
	uint8_t kind;	 /* enum rule_kind */
	uint64_t offset; /* from the CFA; signed, wrapping sums give the same */
};

/* What the CFI says at one address, as a step follows it: libdw runs the
 * CFI's program for each address it is asked, which costs more than the
 * rest of the walk, so the answers are kept. */
struct frame_rules {
	uint64_t file_address;
	bool known;	  /* the entry holds file_address's rules */
	uint8_t outcome;  /* FRAME_STEP_NO_RULE, FRAME_STEP_FAILED (a rule not
			     followed), or FRAME_STEP_DONE: follow the rules */
	bool cfa_from_sp; /* the CFA is the stack pointer plus cfa_offset, else
			     the frame pointer plus it */
	uint64_t cfa_offset;
	struct register_rule return_address, frame_pointer;
};

/* Entries per file with CFI, one slot per address (the last one asked
 * wins): 48 KiB for each file a walk goes through. */
#define RULES_CACHED 1024

/* Register `regno`'s rule. libdw gives same_value as no operation and a
 * NULL list, undefined as no operation; offset(N) as DW_OP_call_frame_cfa
 * then DW_OP_plus_uconst N unless N is 0, val_offset(N) as the same ending
 * in DW_OP_stack_value. */
static struct register_rule register_rule(Dwarf_Frame *frame, int regno)
{
	struct register_rule rule = {RULE_UNSUPPORTED, 0};
	Dwarf_Op ops_memory[3], *ops;
	size_t count, used = 1;

	if (dwarf_frame_register(frame, regno, ops_memory, &ops, &count) != 0)
		return rule;
	if (count == 0) {
		rule.kind = ops ? RULE_UNDEFINED : RULE_SAME;
		return rule;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return rule;
	if (count > used && ops[used].atom == DW_OP_plus_uconst)
		rule.offset = ops[used++].number;
	if (count == used + 1 && ops[used].atom == DW_OP_stack_value)
		rule.kind = RULE_VALUE;
	else if (count == used)
		rule.kind = RULE_SAVED_AT;
	return rule;
}

/* The rules at `file_address`, from libdw. The CFA is followed when it is
 * the stack or frame pointer plus an offset (one DW_OP_bregx); expressions (PLT entries)
 * are not. A signal frame's caller is the interrupted state, in a ucontext
 * a step does not read. */
static void compute_rules(struct call_frame_info *info, uint64_t file_address,
			  struct frame_rules *rules)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t count;
	bool signal_frame;
	int regno;

	*rules = (struct frame_rules){
	    .file_address = file_address, .known = true, .outcome = FRAME_STEP_NO_RULE};
	if (dwarf_cfi_addrframe(info->cfi, file_address, &frame) != 0) {
		if (info->entry && file_address - info->entry < ENTRY_CODE_SIZE)
			rules->outcome = FRAME_STEP_OUTERMOST;
		return;
	}
	rules->outcome = FRAME_STEP_FAILED;
	regno = dwarf_frame_info(frame, NULL, NULL, &signal_frame);
	if (regno >= 0 && !signal_frame && dwarf_frame_cfa(frame, &ops, &count) == 0 &&
	    count == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == (Dwarf_Word)info->registers->stack_pointer ||
	     ops[0].number == (Dwarf_Word)info->registers->frame_pointer)) {
		rules->outcome = FRAME_STEP_DONE;
		rules->cfa_from_sp = ops[0].number == (Dwarf_Word)info->registers->stack_pointer;
		rules->cfa_offset = ops[0].number2;
		rules->return_address = register_rule(frame, regno);
		rules->frame_pointer = register_rule(frame, info->registers->frame_pointer);
	}
	free(frame);
}

static const struct frame_rules *rules_at(struct call_frame_info *info, uint64_t file_address)
{
	struct frame_rules *rules;

	if (!info->rules && !(info->rules = calloc(RULES_CACHED, sizeof(*info->rules)))) {
		static struct frame_rules uncached;

		compute_rules(info, file_address, &uncached);
		return &uncached;
	}
	rules = &info->rules[(file_address ^ file_address >> 10) % RULES_CACHED];
	if (!rules->known || rules->file_address != file_address)
		compute_rules(info, file_address, rules);
	return rules;
}

/* Restores a register of the caller by `rule` into `value`, which holds the
 * callee's. False when the rule is not followed or its slot lies outside
 * the copy. */
static bool restore(const struct register_rule *rule, uint64_t cfa, const struct stack_copy *stack,
		    uint64_t *value)
{
	switch (rule->kind) {
	case RULE_SAME:
		return true;
	case RULE_SAVED_AT:
		return stack_copy_read(stack, cfa + rule->offset, value);
	case RULE_VALUE:
		*value = cfa + rule->offset;
		return true;
	default:
		return false;
	}
}

enum frame_step call_frame_info_step(struct call_frame_info *info, uint64_t file_address,
				     const struct stack_copy *stack,
				     struct frame_registers *registers)
{
	const struct frame_rules *rules;
	struct frame_registers caller = *registers;
	uint64_t cfa;

	if (registers->machine != info->registers->machine)
		return FRAME_STEP_FAILED;
	rules = rules_at(info, file_address);
	if (rules->outcome != FRAME_STEP_DONE)
		return (enum frame_step)rules->outcome;
	if (rules->cfa_from_sp)
		cfa = registers->sp + rules->cfa_offset;
	else if (registers->bp_known)
		cfa = registers->bp + rules->cfa_offset;
	else
		return FRAME_STEP_FAILED;
	if (rules->return_address.kind == RULE_UNDEFINED)
		return FRAME_STEP_OUTERMOST;
	/* The return address register keeps its value: an arm64 leaf that
	 * has not saved lr (x86-64's return address column, a pseudo
	 * register, always has a slot). */
	if (rules->return_address.kind == RULE_SAME) {
		if (!registers->lr_known)
			return FRAME_STEP_FAILED;
		caller.ip = registers->lr;
	} else if (!restore(&rules->return_address, cfa, stack, &caller.ip))
		return FRAME_STEP_FAILED;
	if (!restore(&rules->frame_pointer, cfa, stack, &caller.bp))
		caller.bp_known = false;
	caller.ip = frame_return_address(caller.machine, caller.ip);
	caller.sp = cfa;
	caller.lr_known = false;
	*registers = caller;
	return FRAME_STEP_DONE;
}
