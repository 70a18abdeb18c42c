/* libFuzzer entry point: the bytes are the ReadyToRun major version (one
 * byte), then a ReadyToRun image's DebugInfo section as the image holds it
 * (readytorun.h, readytorun_bounds.h): the NativeArray of each runtime
 * function's debug info, and the infos. Reads the native to IL offset map
 * of the first runtime functions, as a line lookup does. Any crash, hang
 * or out-of-bounds read is a bug.
 * Seeded with the sections of small framework images (fuzz/make-seeds). */
#include "readytorun.h"
#include "readytorun_bounds.h"

#include <stdint.h>

#define RUNTIME_FUNCTIONS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct readytorun r2r = {0};
	struct readytorun_table *section = &r2r.debug_info;

	if (size < 2 || size > UINT32_MAX)
		return 0;
	r2r.major_version = data[0];
	/* The section as if mapped at RVA 1, after the version byte. */
	*section = (struct readytorun_table){.section_base = data,
					     .start_rva = 1,
					     .end_rva = (uint32_t)size,
					     .section_start_rva = 1,
					     .section_end_rva = (uint32_t)size};
	r2r.debug_info_tried = true;
	for (uint32_t index = 0; index < RUNTIME_FUNCTIONS; index++) {
		struct readytorun_bounds bounds;
		struct managed_line_map_entry entry;
		const uint8_t *bytes;
		size_t available;

		if (readytorun_debug_info(&r2r, index, &bytes, &available) &&
		    readytorun_bounds_start(&bounds, bytes, available, r2r.major_version))
			while (readytorun_bounds_next(&bounds, &entry))
				;
	}
	return 0;
}
