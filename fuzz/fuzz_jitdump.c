/* libFuzzer entry point for the jitdump parser: the bytes are fed in two
 * pieces (the file as read in one poll, then the next), the second piece
 * from a copy whose machine code is cleared as collect's copy does, and
 * every address the input names is looked up, at a time before and after
 * its records, and unwound with its prolog's info, the input as the stack.
 * The framing-only parser (jitdump_new_framing) reads the same bytes and
 * must tell the same end of the file. */
#include "jitdump.h"
#include "x64_unwind.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jitdump *dump = jitdump_new(), *framed = jitdump_new_framing();
	struct jitdump_summary summary, framing;
	struct code_range range;
	struct windows_unwind_code_at unwind;
	struct stack_copy stack = {.start = 0x10000, .bytes = data, .size = size};
	size_t split = size ? data[0] % (size + 1) : 0;
	unsigned char *copy = malloc(size - split + 1);

	if (!dump || !framed || !copy) {
		jitdump_free(dump);
		jitdump_free(framed);
		free(copy);
		return 0;
	}
	jitdump_add_bytes(framed, data, size);
	jitdump_add_bytes(dump, data, split);
	memcpy(copy, data + split, size - split);
	jitdump_add_bytes_clearing_code(dump, copy, size - split);
	free(copy);
	jitdump_summarize(dump, &summary);
	jitdump_summarize(framed, &framing);
	if (framing.bytes != summary.bytes || framing.missing_bytes != summary.missing_bytes ||
	    framing.valid != summary.valid)
		abort();
	jitdump_free(framed);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t address;

		memcpy(&address, data + i, sizeof(address));
		if (jitdump_lookup(dump, address, 0, &range) && range.name)
			(void)strlen(range.name);
		if (jitdump_unwind_at(dump, address, UINT64_MAX, &unwind)) {
			struct frame_registers registers = {
			    .ip = address, .sp = 0x10000 + i, .bp = 0x10040, .bp_known = true};

			x64_unwind_step(&unwind, false, &stack, &registers);
		}
		jitdump_lookup(dump, address, UINT64_MAX, &range);
	}
	jitdump_free(dump);
	return 0;
}
