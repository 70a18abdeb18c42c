#include "dwarf_expression.h"

#include <dwarf.h>

/* Far more than the CFI of any toolchain needs (glibc's signal frame and
 * the PLT's expression push at most 3 values and run under 10 steps). */
#define STACK_DEPTH 16
#define MAX_STEPS   256

struct machine {
	uint64_t values[STACK_DEPTH];
	size_t depth;
};

static bool push(struct machine *machine, uint64_t value)
{
	if (machine->depth == STACK_DEPTH)
		return false;
	machine->values[machine->depth++] = value;
	return true;
}

static bool pop(struct machine *machine, uint64_t *value)
{
	if (machine->depth == 0)
		return false;
	*value = machine->values[--machine->depth];
	return true;
}

/* Reads `size` bytes (1, 2, 4 or 8) at `address`: the 8 bytes from there
 * must lie in the copy, whose slots a walk notes 8 bytes at a time. */
static bool read_memory(const struct stack_copy *stack, uint64_t address, uint64_t size,
			uint64_t *value)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	if (!stack_copy_read(stack, address, value))
		return false;
	if (size < 8)
		*value &= (1ULL << (size * 8)) - 1; /* little-endian: the low bytes */
	return true;
}

/* The binary operations: `first` was pushed before `second`. */
static bool binary(uint8_t atom, uint64_t first, uint64_t second, uint64_t *result)
{
	int64_t signed_first = (int64_t)first, signed_second = (int64_t)second;

	switch (atom) {
	case DW_OP_plus:
		*result = first + second;
		return true;
	case DW_OP_minus:
		*result = first - second;
		return true;
	case DW_OP_mul:
		*result = first * second;
		return true;
	case DW_OP_div: /* signed; the one overflow and division by zero fail */
		if (second == 0 || (signed_first == INT64_MIN && signed_second == -1))
			return false;
		*result = (uint64_t)(signed_first / signed_second);
		return true;
	case DW_OP_mod:
		if (second == 0)
			return false;
		*result = first % second;
		return true;
	case DW_OP_and:
		*result = first & second;
		return true;
	case DW_OP_or:
		*result = first | second;
		return true;
	case DW_OP_xor:
		*result = first ^ second;
		return true;
	case DW_OP_shl:
		*result = second >= 64 ? 0 : first << second;
		return true;
	case DW_OP_shr:
		*result = second >= 64 ? 0 : first >> second;
		return true;
	case DW_OP_shra:
		*result = (uint64_t)(signed_first >> (second >= 64 ? 63 : second));
		return true;
	case DW_OP_eq:
		*result = first == second;
		return true;
	case DW_OP_ne:
		*result = first != second;
		return true;
	case DW_OP_ge:
		*result = signed_first >= signed_second;
		return true;
	case DW_OP_gt:
		*result = signed_first > signed_second;
		return true;
	case DW_OP_le:
		*result = signed_first <= signed_second;
		return true;
	case DW_OP_lt:
		*result = signed_first < signed_second;
		return true;
	default:
		return false;
	}
}

/* The operation a branch lands on: libdw keeps each one's byte offset in
 * the expression and the branch's displacement from the end of its own
 * three bytes. An expression libdw prefixed with DW_OP_call_frame_cfa (a
 * register rule's) has two operations at offset 0: the branch lands on the
 * expression's own. */
static bool branch_target(const Dwarf_Op *ops, size_t count, size_t from, size_t *target)
{
	uint64_t offset = ops[from].offset + 3 + ops[from].number;

	for (size_t i = count; i-- > 0;)
		if (ops[i].offset == offset) {
			*target = i;
			return true;
		}
	if (offset == ops[count - 1].offset + 1) { /* the end: 1-byte last operations only */
		*target = count;
		return true;
	}
	return false;
}

/* One operation of the stack machine other than a branch. */
static bool run(const Dwarf_Op *op, const struct dwarf_expression_input *input,
		struct machine *machine)
{
	uint64_t first, second, third, value;

	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31)
		return push(machine, op->atom - DW_OP_lit0);
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31)
		return input->read_register(input->frame, op->atom - DW_OP_breg0, &value) &&
		       push(machine, value + op->number);
	switch (op->atom) {
	case DW_OP_bregx:
		return op->number < 1024 &&
		       input->read_register(input->frame, (unsigned)op->number, &value) &&
		       push(machine, value + op->number2);
	case DW_OP_addr:
	case DW_OP_const1u:
	case DW_OP_const1s:
	case DW_OP_const2u:
	case DW_OP_const2s:
	case DW_OP_const4u:
	case DW_OP_const4s:
	case DW_OP_const8u:
	case DW_OP_const8s:
	case DW_OP_constu:
	case DW_OP_consts:
		return push(machine, op->number); /* libdw sign-extends the signed ones */
	case DW_OP_call_frame_cfa:
		return input->cfa_known && push(machine, input->cfa);
	case DW_OP_dup:
		return machine->depth > 0 && push(machine, machine->values[machine->depth - 1]);
	case DW_OP_over:
		return machine->depth > 1 && push(machine, machine->values[machine->depth - 2]);
	case DW_OP_pick:
		return op->number < machine->depth &&
		       push(machine, machine->values[machine->depth - 1 - op->number]);
	case DW_OP_drop:
		return pop(machine, &value);
	case DW_OP_swap:
		return pop(machine, &second) && pop(machine, &first) && push(machine, second) &&
		       push(machine, first);
	case DW_OP_rot: /* the top moves under the two below it */
		return pop(machine, &third) && pop(machine, &second) && pop(machine, &first) &&
		       push(machine, third) && push(machine, first) && push(machine, second);
	case DW_OP_deref:
		return pop(machine, &value) && read_memory(input->stack, value, 8, &value) &&
		       push(machine, value);
	case DW_OP_deref_size:
		return pop(machine, &value) &&
		       read_memory(input->stack, value, op->number, &value) && push(machine, value);
	case DW_OP_plus_uconst:
		return pop(machine, &value) && push(machine, value + op->number);
	case DW_OP_abs:
		return pop(machine, &value) && push(machine, (int64_t)value < 0 ? -value : value);
	case DW_OP_neg:
		return pop(machine, &value) && push(machine, -value);
	case DW_OP_not:
		return pop(machine, &value) && push(machine, ~value);
	case DW_OP_nop:
		return true;
	default:
		return pop(machine, &second) && pop(machine, &first) &&
		       binary(op->atom, first, second, &value) && push(machine, value);
	}
}

bool dwarf_expression_evaluate(const Dwarf_Op *ops, size_t count,
			       const struct dwarf_expression_input *input, uint64_t *result,
			       bool *is_value)
{
	struct machine machine = {.depth = 0};
	size_t next = 0;
	uint64_t condition;

	*is_value = false;
	for (unsigned steps = 0; next < count; steps++) {
		const Dwarf_Op *op = &ops[next];

		if (steps == MAX_STEPS)
			return false;
		if (op->atom == DW_OP_stack_value) {
			/* Only as the last operation: the value is the result. */
			if (next + 1 != count)
				return false;
			*is_value = true;
			break;
		}
		if (op->atom == DW_OP_skip || op->atom == DW_OP_bra) {
			condition = 1;
			if (op->atom == DW_OP_bra && !pop(&machine, &condition))
				return false;
			if (condition == 0)
				next++;
			else if (!branch_target(ops, count, next, &next))
				return false;
			continue;
		}
		if (!run(op, input, &machine))
			return false;
		next++;
	}
	return pop(&machine, result);
}
