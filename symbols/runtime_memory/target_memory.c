#include "target_memory.h"

#include <string.h>
#include <sys/uio.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void target_memory_init(struct target_memory *memory, pid_t pid, uint64_t max_bytes,
			double max_seconds)
{
	*memory = (struct target_memory){
	    .pid = pid,
	    .bytes_left = max_bytes,
	    .deadline_ns = now_ns() + (uint64_t)(max_seconds * 1e9),
	};
}

void target_memory_init_image(struct target_memory *memory,
			      const struct target_memory_region *regions, size_t count,
			      uint64_t max_bytes)
{
	*memory = (struct target_memory){
	    .regions = regions,
	    .region_count = count,
	    .bytes_left = max_bytes,
	    .deadline_ns = UINT64_MAX,
	};
}

/* A read from the image: the region holding all `size` bytes. */
static bool read_image(const struct target_memory *memory, uint64_t address, void *bytes,
		       size_t size)
{
	for (size_t i = 0; i < memory->region_count; i++) {
		const struct target_memory_region *region = &memory->regions[i];

		if (address >= region->address && address - region->address <= region->size &&
		    size <= region->size - (address - region->address)) {
			memcpy(bytes, region->bytes + (address - region->address), size);
			return true;
		}
	}
	return false;
}

bool target_memory_read(struct target_memory *memory, uint64_t address, void *bytes, size_t size)
{
	if (size == 0 || size > TARGET_MEMORY_MAX_READ || address + size < address)
		return false;
	if (memory->stopped_by)
		return false;
	if (size > memory->bytes_left) {
		memory->stopped_by = "the byte budget";
		return false;
	}
	if (now_ns() > memory->deadline_ns) {
		memory->stopped_by = "the time budget";
		return false;
	}
	memory->bytes_left -= size;
	memory->reads++;
	if (memory->regions)
		return read_image(memory, address, bytes, size);

	struct iovec local = {.iov_base = bytes, .iov_len = size};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = size};

	return process_vm_readv(memory->pid, &local, 1, &remote, 1, 0) == (ssize_t)size;
}

bool target_memory_read_u64(struct target_memory *memory, uint64_t address, uint64_t *value)
{
	return target_memory_read(memory, address, value, sizeof(*value));
}

bool target_memory_read_u32(struct target_memory *memory, uint64_t address, uint32_t *value)
{
	return target_memory_read(memory, address, value, sizeof(*value));
}
