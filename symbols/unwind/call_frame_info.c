#include "call_frame_info.h"
#include "cfi_registers.h"
#include "dwarf_expression.h"
#include "realigned_frame.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF numbers of the registers a step reads, by machine: the
 * System V x86-64 psABI (figure 3.36) and the DWARF for the Arm 64-bit
 * Architecture (AADWARF64). */
struct dwarf_registers {
	enum frame_machine machine;
	int stack_pointer, frame_pointer, link_register, instruction_pointer;
	int return_address; /* the CFI's return address column */
};

/* x86-64 has no link register (-1); its return address column, 16, is the
 * caller's rip. arm64's return address column is the link register, x30;
 * its pc is 32. */
static const struct dwarf_registers x86_64_registers = {FRAME_MACHINE_X86_64, 7, 6, -1, 16, 16};
static const struct dwarf_registers aarch64_registers = {FRAME_MACHINE_AARCH64, 31, 29, 30, 32, 30};

/* How far past the ELF entry point its code runs without a caller: the
 * dynamic loader's _start, which calls _dl_start and then _dl_init from
 * the process's first stack, has no CFI (64 bytes of it on x86-64). */
#define ENTRY_CODE_SIZE 128

struct frame_rules;
static void free_rules(struct frame_rules *cache);

/* The realigned frames a file's cache knows: libcrypto has three. */
#define REALIGNED_FRAMES 8

struct call_frame_info {
	struct elf_file *file;
	uint64_t entry;				 /* the ELF header's entry point */
	const struct dwarf_registers *registers; /* the file's machine's */
	Dwarf_CFI *eh_frame;			 /* dwarf_getcfi_elf's: ended with dwarf_cfi_end */
	Dwarf *debug_info;	   /* owns the .debug_frame CFI when there is no eh_frame */
	Dwarf_CFI *cfi;		   /* the one in use */
	struct frame_rules *rules; /* RULES_CACHED of them, by address; NULL until a step */
	/* OpenSSL's realigned frames found in the file (realigned_frame.h),
	 * by the address of their body's first row. */
	struct realigned_frame realigned[REALIGNED_FRAMES];
	uint64_t realigned_body[REALIGNED_FRAMES];
	uint8_t realigned_count;
};

/* Whether the CFI section `name` of `elf` names no register past
 * CFI_MAX_REGISTER (cfi_registers.h); false without one (libdw may have
 * found CFI through the program headers: it goes unchecked, so unused). */
static bool registers_bounded(Elf *elf, const char *name, bool is_eh_frame)
{
	size_t names;
	Elf_Scn *section = NULL;
	GElf_Shdr header;
	Elf_Data *data;

	if (elf_getshdrstrndx(elf, &names) != 0)
		return false;
	while ((section = elf_nextscn(elf, section))) {
		const char *section_name;

		if (!gelf_getshdr(section, &header) ||
		    !(section_name = elf_strptr(elf, names, header.sh_name)) ||
		    strcmp(section_name, name))
			continue;
		/* A debug file's compressed section, inflated as libdw does. */
		if (header.sh_flags & SHF_COMPRESSED && elf_compress(section, 0, 0) < 0)
			return false;
		if (header.sh_type == SHT_NOBITS)
			return false;
		data = elf_getdata(section, NULL);
		return data && data->d_buf &&
		       cfi_registers_bounded(data->d_buf, data->d_size, is_eh_frame);
	}
	return false;
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
	if (registers_bounded(file->elf, ".eh_frame", true))
		info->cfi = info->eh_frame = dwarf_getcfi_elf(file->elf);
	else if (registers_bounded(file->elf, ".debug_frame", false) &&
		 (info->debug_info = dwarf_begin_elf(file->elf, DWARF_C_READ, NULL)))
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
	free_rules(info->rules);
	free(info);
}

/* How a step finds a caller's register: the same as the callee's
 * (same_value, and the callee-saved registers the CFI does not mention),
 * undefined, saved at the CFA plus an offset (offset(N)), the CFA plus an
 * offset itself (val_offset(N)), in another register (register(R)), or by
 * an expression giving its slot (expression(E)) or its value
 * (val_expression(E)). */
enum rule_kind {
	RULE_SAME,
	RULE_UNDEFINED,
	RULE_SAVED_AT,
	RULE_VALUE,
	RULE_REGISTER,
	RULE_EXPRESSION,
	RULE_VAL_EXPRESSION,
};

struct register_rule {
	uint8_t regno; /* DWARF numbering; the return address column included */
	uint8_t kind;  /* enum rule_kind */
	uint32_t expression_length;
	uint64_t offset;	    /* from the CFA (signed, wrapping sums give the same), or
				       RULE_REGISTER's register */
	const Dwarf_Op *expression; /* libdw's, alive with the CFI: with
				       DW_OP_call_frame_cfa first, as DWARF
				       pushes the CFA before it runs */
};

/* The CFA: a register plus an offset, or an expression. */
struct cfa_rule {
	bool by_expression;
	uint8_t regno;
	/* An expression's realigned frame (realigned_frame.h): its index in
	 * the file's plus one, 0 for none; offset is then the expression's
	 * last addend, the CFA's distance from the entry stack pointer. */
	uint8_t realigned;
	uint32_t expression_length;
	uint64_t offset;
	const Dwarf_Op *expression;
};

/* What the CFI says at one address, as a step follows it: libdw runs the
 * CFI's program for each address it is asked, which costs more than the
 * rest of the walk, so the answers are kept. The registers with a rule of
 * their own are listed; the others are the callee's (same_mask) or
 * undefined. */
struct frame_rules {
	uint64_t file_address;
	bool known;	   /* the entry holds file_address's rules */
	uint8_t outcome;   /* FRAME_STEP_NO_RULE, FRAME_STEP_FAILED (a rule not
			      followed), or FRAME_STEP_DONE: follow the rules */
	bool signal_frame; /* the caller is the interrupted state */
	struct cfa_rule cfa;
	uint64_t same_mask; /* bit n: register n is the callee's */
	uint8_t rule_count, rule_capacity;
	struct register_rule *rules; /* owned; kept for the next address of the slot */
};

/* Entries per file with CFI, one slot per address (the last one asked
 * wins): 64 KiB for each file a walk goes through, and its rules. */
#define RULES_CACHED 1024

static void free_rules(struct frame_rules *cache)
{
	for (size_t i = 0; cache && i < RULES_CACHED; i++)
		free(cache[i].rules);
	free(cache);
}

/* The DWARF columns a row may give rules for: the general registers, the
 * stack pointer, and x86-64's return address column (16). */
#define RULE_COLUMNS 33

static bool add_rule(struct frame_rules *rules, struct register_rule rule)
{
	if (rules->rule_count == rules->rule_capacity) {
		uint8_t capacity = rules->rule_capacity ? rules->rule_capacity * 2 : 8;
		struct register_rule *grown;

		/* One rule a column at most: 64 entries hold them all. */
		if (!(grown = realloc(rules->rules, capacity * sizeof(*grown))))
			return false;
		rules->rules = grown;
		rules->rule_capacity = capacity;
	}
	rules->rules[rules->rule_count++] = rule;
	return true;
}

/* Register `regno`'s rule, as libdw gives it (libdw.h, dwarf_frame_register):
 * same_value as no operation and a NULL list (and so the callee-saved
 * registers its ABI table names, when the CFI does not), undefined as no
 * operation; offset(N) as DW_OP_call_frame_cfa then DW_OP_plus_uconst N
 * unless N is 0, val_offset(N) the same ending in DW_OP_stack_value;
 * register(R) as DW_OP_regx R; an expression with DW_OP_call_frame_cfa
 * first, a val_expression ending in DW_OP_stack_value. */
static bool register_rule(Dwarf_Frame *frame, int regno, struct register_rule *rule)
{
	Dwarf_Op ops_memory[3], *ops;
	size_t count, used = 1;
	bool is_value;

	*rule = (struct register_rule){.regno = (uint8_t)regno};
	if (dwarf_frame_register(frame, regno, ops_memory, &ops, &count) != 0)
		return false;
	if (count == 0) {
		rule->kind = ops ? RULE_UNDEFINED : RULE_SAME;
		return true;
	}
	is_value = ops[count - 1].atom == DW_OP_stack_value;
	if (count == 1 && ops[0].atom == DW_OP_regx) {
		rule->kind = RULE_REGISTER;
		rule->offset = ops[0].number;
		return ops[0].number < RULE_COLUMNS;
	}
	if (ops == ops_memory && ops[0].atom == DW_OP_call_frame_cfa) {
		if (count > used && ops[used].atom == DW_OP_plus_uconst)
			rule->offset = ops[used++].number;
		rule->kind = is_value ? RULE_VALUE : RULE_SAVED_AT;
		return count == used + is_value;
	}
	if (ops == ops_memory || count > UINT32_MAX)
		return false;
	rule->kind = is_value ? RULE_VAL_EXPRESSION : RULE_EXPRESSION;
	rule->expression = ops;
	rule->expression_length = (uint32_t)(count - is_value);
	return true;
}

static bool cfa_rule(Dwarf_Frame *frame, struct cfa_rule *rule)
{
	Dwarf_Op *ops;
	size_t count;

	*rule = (struct cfa_rule){0};
	if (dwarf_frame_cfa(frame, &ops, &count) != 0 || count == 0 || count > UINT32_MAX)
		return false;
	/* A register plus an offset comes as one DW_OP_bregx held in `frame`,
	 * which is freed before a step reads the rule: copied, never kept. No
	 * register past the tracked columns has a value: no CFA. */
	if (count == 1 && ops[0].atom == DW_OP_bregx) {
		if (ops[0].number >= RULE_COLUMNS)
			return false;
		rule->regno = (uint8_t)ops[0].number;
		rule->offset = ops[0].number2;
		return true;
	}
	rule->by_expression = true;
	rule->expression = ops;
	rule->expression_length = (uint32_t)count;
	return true;
}

/* Whether `ops` are [rsp + offset] + addend: perlasm's
 * ".cfi_cfa_expression %rsp+N,deref,+K". */
static bool is_saved_stack_pointer(const Dwarf_Op *ops, size_t count, uint64_t *offset,
				   uint64_t *addend)
{
	if (count != 3 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_deref ||
	    ops[2].atom != DW_OP_plus_uconst)
		return false;
	*offset = ops[0].number;
	*addend = ops[2].number;
	return true;
}

/* The CFI rows a search for a realigned frame's prologue walks back, and
 * the prologue bytes it reads. */
#define PROLOGUE_ROWS  64
#define PROLOGUE_BYTES 256

/* The realigned frame (realigned_frame.h) the code at `file_address` is
 * the body of: its index in info->realigned plus one, 0 when none. The
 * rows before it, walked back, lead to the prologue: its last rows give
 * the CFA as rax + 8, the body's first one as [rsp + OFF] + 8. */
static uint8_t find_realigned_frame(struct call_frame_info *info, uint64_t file_address)
{
	uint64_t address = file_address, body = 0, saved_offset = 0, offset, addend;
	uint8_t code[PROLOGUE_BYTES];

	for (int row = 0; row < PROLOGUE_ROWS; row++) {
		Dwarf_Frame *frame;
		Dwarf_Addr start, end;
		Dwarf_Op *ops;
		size_t count;
		bool in_prologue;

		if (dwarf_cfi_addrframe(info->cfi, address, &frame) != 0)
			return 0;
		if (dwarf_frame_info(frame, &start, &end, NULL) < 0 ||
		    dwarf_frame_cfa(frame, &ops, &count) != 0) {
			free(frame);
			return 0;
		}
		in_prologue = count == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == 0 &&
			      ops[0].number2 == 8;
		if (!in_prologue && is_saved_stack_pointer(ops, count, &offset, &addend)) {
			body = start;
			saved_offset = offset;
		}
		free(frame);
		if (in_prologue) {
			struct realigned_frame found;

			for (uint8_t i = 0; i < info->realigned_count; i++)
				if (info->realigned_body[i] == body)
					return i + 1;
			if (!body || body <= start || body - start > PROLOGUE_BYTES ||
			    info->realigned_count == REALIGNED_FRAMES ||
			    !elf_file_read_at(info->file, start, code, body - start) ||
			    !realigned_frame_parse(code, body - start, saved_offset, &found))
				return 0;
			info->realigned_body[info->realigned_count] = body;
			info->realigned[info->realigned_count] = found;
			return ++info->realigned_count;
		}
		if (start == 0)
			return 0;
		address = start - 1;
	}
	return 0;
}

/* The rules at `file_address`, from libdw. */
static void compute_rules(struct call_frame_info *info, uint64_t file_address,
			  struct frame_rules *rules)
{
	const struct dwarf_registers *numbers = info->registers;
	Dwarf_Frame *frame;
	struct register_rule rule;
	int return_column;

	rules->file_address = file_address;
	rules->known = true;
	rules->outcome = FRAME_STEP_NO_RULE;
	rules->rule_count = 0;
	rules->same_mask = 0;
	if (dwarf_cfi_addrframe(info->cfi, file_address, &frame) != 0) {
		if (info->entry && file_address - info->entry < ENTRY_CODE_SIZE)
			rules->outcome = FRAME_STEP_OUTERMOST;
		return;
	}
	rules->outcome = FRAME_STEP_FAILED;
	return_column = dwarf_frame_info(frame, NULL, NULL, &rules->signal_frame);
	if (return_column < 0 || return_column >= RULE_COLUMNS || !cfa_rule(frame, &rules->cfa))
		goto done;
	if (numbers->machine == FRAME_MACHINE_X86_64 && info->eh_frame &&
	    is_saved_stack_pointer(rules->cfa.expression, rules->cfa.expression_length,
				   &(uint64_t){0}, &rules->cfa.offset))
		rules->cfa.realigned = find_realigned_frame(info, file_address);
	for (int regno = 0; regno < RULE_COLUMNS; regno++) {
		bool is_return_address = regno == return_column;

		if (regno == numbers->stack_pointer && !is_return_address)
			continue; /* the caller's is the CFA */
		if (!register_rule(frame, regno, &rule)) {
			if (is_return_address)
				goto done;
			continue; /* a rule not followed: the caller's register is unknown */
		}
		if (is_return_address) {
			if (rule.kind == RULE_UNDEFINED) {
				rules->outcome = FRAME_STEP_OUTERMOST; /* _start, start_thread */
				goto done;
			}
			/* x86-64's return address column is no register to keep. */
			if (rule.kind == RULE_SAME && regno != numbers->link_register)
				goto done;
		} else if (rule.kind == RULE_SAME || rule.kind == RULE_UNDEFINED) {
			/* A register the CFI gives no rule is the callee's, as
			 * libgcc's unwinder and gdb read it: the callee-saved
			 * ones, and any other hand-written code keeps across
			 * its own calls (OpenSSL's CFA in rax). libdw answers
			 * from an ABI table of its own for them, which calls
			 * rbx undefined: an explicit DW_CFA_undefined looks
			 * the same, and no compiler writes one but for the
			 * return address. */
			rules->same_mask |= 1ULL << regno;
			continue;
		}
		if (!add_rule(rules, rule))
			goto done;
	}
	rules->outcome = FRAME_STEP_DONE;
done:
	free(frame);
}

static const struct frame_rules *rules_at(struct call_frame_info *info, uint64_t file_address)
{
	struct frame_rules *rules;

	if (!info->rules && !(info->rules = calloc(RULES_CACHED, sizeof(*info->rules))))
		return NULL;
	rules = &info->rules[(file_address ^ file_address >> 10) % RULES_CACHED];
	if (!rules->known || rules->file_address != file_address)
		compute_rules(info, file_address, rules);
	return rules;
}

/* A frame's register `regno` by its DWARF number, for a step of `machine`;
 * false when unknown. Reading a general register notes it in the stack's
 * reads. */
struct register_file {
	const struct frame_registers *registers;
	const struct dwarf_registers *numbers;
	const struct stack_copy *stack;
};

static bool read_register(const void *frame, unsigned regno, uint64_t *value)
{
	const struct register_file *file = frame;
	const struct frame_registers *registers = file->registers;
	struct general_registers *general;

	if (regno == (unsigned)file->numbers->stack_pointer) {
		*value = registers->sp;
		return true;
	}
	if (regno == (unsigned)file->numbers->frame_pointer) {
		*value = registers->bp;
		return registers->bp_known;
	}
	if (regno == (unsigned)file->numbers->link_register) {
		*value = registers->lr;
		return registers->lr_known;
	}
	if (regno == (unsigned)file->numbers->instruction_pointer) {
		*value = registers->ip;
		return true;
	}
	if (regno >= FRAME_GENERAL_REGISTERS || !registers->general ||
	    !(registers->general->known & 1U << regno))
		return false;
	general = registers->general;
	if (file->stack->reads)
		file->stack->reads->general_registers |= 1U << regno;
	*value = general->values[regno];
	return true;
}

/* Sets register `regno` of the caller, now in `registers`: the frame
 * pointer, lr or a general register. */
static void write_register(struct frame_registers *registers, const struct dwarf_registers *numbers,
			   unsigned regno, uint64_t value)
{
	if (regno == (unsigned)numbers->frame_pointer) {
		registers->bp = value;
		registers->bp_known = true;
	} else if (regno == (unsigned)numbers->link_register) {
		registers->lr = value;
		registers->lr_known = true;
	} else if (regno < FRAME_GENERAL_REGISTERS && registers->general) {
		registers->general->values[regno] = value;
		registers->general->known |= 1U << regno;
	}
}

/* Not inlined: its input is built only for the rules that are expressions. */
__attribute__((noinline)) static bool evaluate(const struct register_file *callee,
					       const struct stack_copy *stack, const Dwarf_Op *ops,
					       size_t count, const uint64_t *cfa, uint64_t *result,
					       bool *is_value)
{
	struct dwarf_expression_input input = {
	    .read_register = read_register,
	    .frame = callee,
	    .stack = stack,
	    .cfa = cfa ? *cfa : 0,
	    .cfa_known = cfa != NULL,
	};

	return dwarf_expression_evaluate(ops, count, &input, result, is_value);
}

static bool cfa_of(const struct call_frame_info *info, const struct cfa_rule *rule,
		   const struct register_file *callee, const struct stack_copy *stack,
		   uint64_t *cfa)
{
	uint64_t entry_sp;
	bool is_value;

	if (!rule->by_expression && rule->regno == callee->numbers->stack_pointer) {
		*cfa = callee->registers->sp + rule->offset; /* most rows */
		return true;
	}
	if (!rule->by_expression)
		return read_register(callee, rule->regno, cfa) && (*cfa += rule->offset, true);
	/* A location expression's value is the CFA (DWARF 5, 6.4.2.2). */
	if (evaluate(callee, stack, rule->expression, rule->expression_length, NULL, cfa,
		     &is_value) &&
	    !is_value)
		return true;
	/* A copy of the saved stack pointer below the stack pointer: its first
	 * one, where the prologue wrote it. */
	if (!rule->realigned || !realigned_frame_entry_sp(&info->realigned[rule->realigned - 1],
							  callee->registers->sp, stack, &entry_sp))
		return false;
	*cfa = entry_sp + rule->offset;
	return true;
}

/* The caller's value of a register by `rule`, from the callee's registers
 * and `cfa`. False when the rule needs what is unknown. */
static bool restore(const struct register_rule *rule, const struct register_file *callee,
		    uint64_t cfa, const struct stack_copy *stack, uint64_t *value)
{
	uint64_t address;
	bool is_value;

	switch (rule->kind) {
	case RULE_SAME:
		return read_register(callee, rule->regno, value);
	case RULE_SAVED_AT:
		return stack_copy_read(stack, cfa + rule->offset, value);
	case RULE_VALUE:
		*value = cfa + rule->offset;
		return true;
	case RULE_REGISTER:
		return read_register(callee, (unsigned)rule->offset, value);
	case RULE_EXPRESSION:
		return evaluate(callee, stack, rule->expression, rule->expression_length, &cfa,
				&address, &is_value) &&
		       stack_copy_read(stack, address, value);
	case RULE_VAL_EXPRESSION:
		return evaluate(callee, stack, rule->expression, rule->expression_length, &cfa,
				value, &is_value);
	default:
		return false;
	}
}

/* Whether the caller's register `regno` is the callee's. */
static bool kept(const struct frame_rules *rules, int regno)
{
	return regno >= 0 && (rules->same_mask >> regno & 1);
}

enum frame_step call_frame_info_step(struct call_frame_info *info, uint64_t file_address,
				     const struct stack_copy *stack,
				     struct frame_registers *registers)
{
	const struct dwarf_registers *numbers = info->registers;
	const struct register_file callee = {registers, numbers, stack};
	const struct frame_rules *rules;
	uint64_t cfa, ip = 0, restored[RULE_COLUMNS], restored_mask = 0;
	bool ip_known = false;

	if (registers->machine != numbers->machine)
		return FRAME_STEP_FAILED;
	if (!(rules = rules_at(info, file_address)))
		return FRAME_STEP_FAILED;
	if (rules->outcome != FRAME_STEP_DONE)
		return (enum frame_step)rules->outcome;
	if (!cfa_of(info, &rules->cfa, &callee, stack, &cfa))
		return FRAME_STEP_FAILED;
	/* Every rule reads the callee's registers: the caller's are written
	 * once all are read. */
	for (size_t i = 0; i < rules->rule_count; i++) {
		const struct register_rule *rule = &rules->rules[i];
		uint64_t value;

		if (!restore(rule, &callee, cfa, stack, &value)) {
			if (rule->regno == numbers->return_address)
				return FRAME_STEP_FAILED;
			continue; /* the caller's register is unknown */
		}
		/* arm64's return address column is lr: the caller's ip, and
		 * its lr only where it was interrupted. */
		if (rule->regno == numbers->return_address) {
			ip = value;
			ip_known = true;
			if (rule->regno != numbers->link_register || !rules->signal_frame)
				continue;
		}
		restored[rule->regno] = value;
		restored_mask |= 1ULL << rule->regno;
	}
	if (!ip_known)
		return FRAME_STEP_FAILED;
	/* The caller keeps the callee's registers the CFI leaves alone, and
	 * those its rules restored; the others are unknown. */
	registers->bp_known &= kept(rules, numbers->frame_pointer);
	registers->lr_known &= kept(rules, numbers->link_register);
	if (registers->general)
		registers->general->known &= (uint32_t)rules->same_mask;
	for (uint64_t left = restored_mask; left; left &= left - 1) {
		unsigned regno = (unsigned)__builtin_ctzll(left);

		write_register(registers, numbers, regno, restored[regno]);
	}
	registers->ip = frame_return_address(registers->machine, ip);
	registers->sp = cfa;
	registers->interrupted = rules->signal_frame;
	return FRAME_STEP_DONE;
}
