/* libFuzzer entry point: the bytes are a .NET assembly file as a target may
 * map it. Reads its PE headers, metadata and ReadyToRun sections and names
 * the code at offsets spread over the file, as the resolver does for frames
 * (managed_image.h). Any crash, leak or out-of-bounds read is a bug.
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
	struct readytorun_runtime_function function;
	const uint8_t *unwind_info;
	size_t unwind_size;
	const char *name;
	uint64_t offset;

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
		managed_image_runtime_function(image, file_offset, &function, &unwind_info,
					       &unwind_size);
	}
	managed_image_free(image);
	return 0;
}
