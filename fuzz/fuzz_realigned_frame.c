/* The prologue bytes of a target's file, read for OpenSSL's realigned
 * frames, and the stack copy the entry stack pointer is then read from: the
 * input's first 8 bytes give the stack pointer's offset into the copy and
 * the saved slot's offset, the next 256 (or fewer) are the prologue, the
 * rest the copy. */
#include "realigned_frame.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROLOGUE_BYTES 256
#define STACK_START    0x7ffc00000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t sp_offset, saved_offset;
	size_t prologue_size;
	struct realigned_frame frame;
	struct stack_copy stack;
	uint64_t entry_sp;

	if (size < 8)
		return 0;
	memcpy(&sp_offset, data, sizeof(sp_offset));
	memcpy(&saved_offset, data + 4, sizeof(saved_offset));
	prologue_size = size - 8 < PROLOGUE_BYTES ? size - 8 : PROLOGUE_BYTES;
	if (!realigned_frame_parse(data + 8, prologue_size, saved_offset, &frame))
		return 0;
	stack = (struct stack_copy){.start = STACK_START,
				    .bytes = data + 8 + prologue_size,
				    .size = size - 8 - prologue_size};
	realigned_frame_entry_sp(&frame, STACK_START + sp_offset, &stack, &entry_sp);
	return 0;
}
