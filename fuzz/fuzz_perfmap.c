/* The perf map reader on any bytes, fed in two parts as a growing map is
 * read, then looked up and copied as a capture does. */
#include "fuzz_input.h"
#include "perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *map = perfmap_new();
	struct perfmap_entry entry;
	size_t half = size / 2;

	perfmap_add_text(map, (const char *)data, half);
	perfmap_lookup(map, size >= 8 ? *(const uint64_t *)(const void *)data : 0, &entry);
	perfmap_add_text(map, (const char *)data + half, size - half);
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t address;

		__builtin_memcpy(&address, data + i, sizeof(address));
		perfmap_lookup(map, address, &entry);
	}
	perfmap_write_copy(map, fuzz_null_output());
	perfmap_free(map);
	return 0;
}
