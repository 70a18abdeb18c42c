/* A .NET runtime's memory as the route from an address to its name reads
 * it (symbols/runtime_memory/): the contract descriptor struct, its JSON
 * and pointer data, the range section map, code heaps and their nibble
 * maps, code headers, MethodDescs and their chunks, modules' paths, the
 * precodes' machine descriptor and stubs. The input is an address space:
 *
 *   u64 the descriptor struct's address (DotNetRuntimeContractDescriptor)
 *   u8 N (at most 8), N x u64 addresses looked up
 *   then regions to the end: u64 address, u32 size, size bytes (the last
 *   one cut where the input ends)
 *
 * all little-endian, read through target_memory's image backend with the
 * budgets the collector gives a process (src/collect/memory_perfmap.c).
 * Modules' files are looked for in an empty directory: their metadata has
 * fuzz targets of its own (readytorun, portable_pdb). */
#include "runtime_descriptor.h"
#include "runtime_names.h"
#include "target_memory.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	MAX_LOOKUPS = 8,
	MAX_REGIONS = 64,
	DESCRIPTOR_BYTES = 4 << 20, /* the collector's budgets */
	LOOKUP_BYTES = 1 << 20,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *data;
	size_t left;
};

static bool take(struct input *input, void *value, size_t size)
{
	if (input->left < size)
		return false;
	memcpy(value, input->data, size);
	input->data += size;
	input->left -= size;
	return true;
}

/* An empty directory as the target's root, made once. */
static int empty_root(void)
{
	static int root = -1;
	char path[] = "/tmp/fuzz-runtime-memory.XXXXXX";

	if (root >= 0)
		return root;
	if (!mkdtemp(path) || (root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	rmdir(path);
	return root;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input input = {data, size};
	struct target_memory_region regions[MAX_REGIONS];
	uint64_t descriptor_address, lookups[MAX_LOOKUPS];
	uint8_t lookup_count;
	size_t region_count = 0;

	if (!take(&input, &descriptor_address, 8) || !take(&input, &lookup_count, 1) ||
	    lookup_count > MAX_LOOKUPS || !take(&input, lookups, lookup_count * 8ul))
		return 0;
	while (region_count < MAX_REGIONS && input.left) {
		struct target_memory_region *region = &regions[region_count++];
		uint32_t region_size = 0;

		*region = (struct target_memory_region){0};
		take(&input, &region->address, 8);
		take(&input, &region_size, 4);
		region->size = region_size < input.left ? region_size : input.left;
		region->bytes = input.data;
		input.data += region->size;
		input.left -= region->size;
	}

	struct target_memory memory;
	char error[256], name[1024];
	struct code_owner owner;

	target_memory_init_image(&memory, regions, region_count, DESCRIPTOR_BYTES);

	struct contract_descriptor *descriptor =
	    runtime_descriptor_read_at(&memory, descriptor_address, error, sizeof(error));
	struct runtime_names *names =
	    descriptor ? runtime_names_new(descriptor, empty_root(), error, sizeof(error)) : NULL;

	for (size_t i = 0; names && i < lookup_count; i++) {
		target_memory_init_image(&memory, regions, region_count, LOOKUP_BYTES);
		runtime_names_lookup(names, &memory, lookups[i], name, sizeof(name), &owner);
	}
	runtime_names_free(names);
	contract_descriptor_free(descriptor);
	return 0;
}
