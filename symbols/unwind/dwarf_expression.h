/* A small DWARF stack machine for the expressions of call frame
 * information: a CFA by DW_CFA_def_cfa_expression, a register's slot or
 * value by DW_CFA_expression and DW_CFA_val_expression (OpenSSL's
 * hand-written code, PLT entries, glibc's signal frame).
 *
 * It runs libdw's decoded operations over a frame's registers and the
 * sample's copy of the stack: the arithmetic, logic, comparison, stack and
 * branch operations, constants, DW_OP_breg and DW_OP_bregx,
 * DW_OP_deref and DW_OP_deref_size, DW_OP_call_frame_cfa. Anything else (a
 * register location, memory outside the copy, a call, TLS, an entry value)
 * ends the evaluation with no answer: it never guesses. The expression is
 * untrusted: its stack, its steps and its branches are bounded. */
#ifndef PROFCPU_DWARF_EXPRESSION_H
#define PROFCPU_DWARF_EXPRESSION_H

#include "stack_copy.h"

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an expression reads. */
struct dwarf_expression_input {
	/* The frame's register `regno` (DWARF numbering); false when unknown. */
	bool (*read_register)(const void *frame, unsigned regno, uint64_t *value);
	const void *frame;
	const struct stack_copy *stack;
	uint64_t cfa; /* DW_OP_call_frame_cfa's, when cfa_known */
	bool cfa_known;
};

/* Runs `ops` and gives the value on top of the stack. `is_value` tells
 * whether the expression ended in DW_OP_stack_value (the result is the
 * value itself, not the address of a slot holding it). False when an
 * operation is not followed, reads what is unknown, or the stack runs
 * dry or over. */
bool dwarf_expression_evaluate(const Dwarf_Op *ops, size_t count,
			       const struct dwarf_expression_input *input, uint64_t *result,
			       bool *is_value);

#endif
