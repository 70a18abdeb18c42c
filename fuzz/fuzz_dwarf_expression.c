/* A DWARF expression of call frame information, run over registers and a
 * stack copy from the input. The input: a count of operations (1 byte),
 * each operation as its atom (1 byte) and its two operands (4 bytes each,
 * little-endian, sign-extended as libdw gives them), then the stack copy,
 * which starts where the stack pointer (and every other register) points. */
#include "dwarf_expression.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OPERATION_SIZE 9
#define STACK_START    0x7ffc0000

static bool read_register(const void *frame, unsigned regno, uint64_t *value)
{
	(void)frame;
	*value = STACK_START + regno * 8;
	return regno < 17;
}

static uint64_t operand(const uint8_t *bytes)
{
	int32_t value;

	memcpy(&value, bytes, sizeof(value));
	return (uint64_t)(int64_t)value;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Dwarf_Op ops[255];
	size_t count = size ? data[0] : 0;
	struct stack_copy stack;
	struct dwarf_expression_input input = {.read_register = read_register,
					       .stack = &stack,
					       .cfa = STACK_START + 64,
					       .cfa_known = true};
	uint64_t result;
	bool is_value;

	if (size < 1 + count * OPERATION_SIZE)
		return 0;
	for (size_t i = 0; i < count; i++) {
		const uint8_t *bytes = data + 1 + i * OPERATION_SIZE;

		ops[i] = (Dwarf_Op){.atom = bytes[0],
				    .number = operand(bytes + 1),
				    .number2 = operand(bytes + 5),
				    .offset = i * 3};
	}
	stack = (struct stack_copy){.start = STACK_START,
				    .bytes = data + 1 + count * OPERATION_SIZE,
				    .size = size - 1 - count * OPERATION_SIZE};
	dwarf_expression_evaluate(ops, count, &input, &result, &is_value);
	return 0;
}
