/* The perf map reader on any bytes, fed in two parts as a growing map is
 * read (the second part later in time), then looked up. */
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
	perfmap_set_time(map, 100);
	perfmap_add_text(map, (const char *)data + half, size - half);
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t address;

		__builtin_memcpy(&address, data + i, sizeof(address));
		perfmap_lookup(map, address, &entry);
	}
	perfmap_lookup_at(map, size, size / 2, &entry);
	perfmap_free(map);
	return 0;
}
