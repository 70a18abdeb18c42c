/* libFuzzer entry point: the bytes are a .NET assembly file as a target may
 * map it. Reads its PE headers, metadata and ReadyToRun sections, names
 * the code at offsets spread over the file and unwinds a frame there, as
 * the resolver and the stack walk do (managed_image.h, windows_unwind.h),
 * as x64 and as arm64 code, with the input's own bytes as the stack copy. Any crash, leak or
 * out-of-bounds read is a bug.
 * Seeded with small framework images (fuzz/make-seeds). */
#include "managed_image.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LOOKUPS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct managed_image *image;
	struct windows_unwind_code_at unwind;
	struct stack_copy stack = {.start = 0x10000, .bytes = data, .size = size};
	const char *name;
	uint64_t offset;
	uint32_t method_token, il_offset;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	image = managed_image_from_bytes(copy, size); /* takes the copy */
	if (!image)
		return 0;
	for (size_t i = 0; i < LOOKUPS; i++) {
		uint64_t file_offset = size * i / LOOKUPS;

		if (managed_image_lookup(image, file_offset, &name, &offset))
			(void)strlen(name);
		managed_image_il_offset(image, file_offset, &method_token, &il_offset);
		if (managed_image_unwind_at(image, file_offset, &unwind))
			for (int machine = FRAME_MACHINE_X86_64; machine <= FRAME_MACHINE_AARCH64;
			     machine++) {
				struct frame_registers registers = {
				    .ip = file_offset,
				    .sp = 0x10000 + i * 8,
				    .bp = 0x10040,
				    .bp_known = true,
				    .lr = 0x10080,
				    .lr_known = true,
				    .machine = (enum frame_machine)machine};

				windows_unwind_step(&unwind, i % 2, &stack, &registers);
			}
	}
	managed_image_free(image);
	return 0;
}
