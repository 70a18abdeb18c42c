#include "runtime_descriptor.h"

#include "elf_file.h"
#include "mapped_file.h"
#include "process_maps.h"
#include "target_file.h"
#include "target_root.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char SYMBOL[] = "DotNetRuntimeContractDescriptor";
static const uint64_t MAGIC = 0x0043414443434e44; /* "DNCCDAC\0" */
enum {
	DESCRIPTOR_STRUCT_SIZE = 40,
	MAX_JSON = 1 << 20,
	/* flags: bit 0 is always set; bit 1 means 4-byte pointers */
	FLAG_POINTER_SIZE_4 = 1u << 1,
};

struct contract_descriptor *runtime_descriptor_read_at(struct target_memory *memory,
						       uint64_t address, char *error,
						       size_t error_size)
{
	uint8_t header[DESCRIPTOR_STRUCT_SIZE];
	uint64_t magic, json_address, pointers_address;
	uint32_t flags, json_size, pointer_count;

	if (!target_memory_read(memory, address, header, sizeof(header))) {
		runtime_memory_error(error, error_size,
				     "cannot read the contract descriptor at 0x%" PRIx64, address);
		return NULL;
	}
	memcpy(&magic, header, 8);
	memcpy(&flags, header + 8, 4);
	memcpy(&json_size, header + 12, 4);
	memcpy(&json_address, header + 16, 8);
	memcpy(&pointer_count, header + 24, 4);
	memcpy(&pointers_address, header + 32, 8);
	if (magic != MAGIC) {
		runtime_memory_error(error, error_size,
				     "no contract descriptor at 0x%" PRIx64 " (its magic)",
				     address);
		return NULL;
	}
	if (flags & FLAG_POINTER_SIZE_4) {
		runtime_memory_error(error, error_size,
				     "the runtime has 4-byte pointers; profcpu reads 8");
		return NULL;
	}
	if (json_size == 0 || json_size > MAX_JSON ||
	    pointer_count > CONTRACT_DESCRIPTOR_MAX_POINTER_DATA) {
		runtime_memory_error(error, error_size,
				     "the contract descriptor's sizes are out of bounds (%" PRIu32
				     " bytes of JSON, %" PRIu32 " pointers)",
				     json_size, pointer_count);
		return NULL;
	}

	char *json = malloc(json_size);
	uint64_t *pointers = malloc(((size_t)pointer_count + 1) * sizeof(uint64_t));
	struct contract_descriptor *contracts = NULL;

	if (!json || !pointers)
		runtime_memory_error(error, error_size, "out of memory");
	else if (!target_memory_read(memory, json_address, json, json_size) ||
		 (pointer_count && !target_memory_read(memory, pointers_address, pointers,
						       pointer_count * sizeof(uint64_t))))
		runtime_memory_error(error, error_size, "cannot read the contract descriptor's %s",
				     memory->stopped_by ? memory->stopped_by : "data");
	else
		contracts = contract_descriptor_parse(json, json_size, pointers, pointer_count,
						      error, error_size);
	free(json);
	free(pointers);
	return contracts;
}

/* The mapping of libcoreclr.so's first page (file offset 0) in `pid`. */
struct coreclr_mapping {
	uint64_t start;
	struct file_identity identity;
	char path[PATH_MAX];
};

/* target_process_for_each_mapping(): 1 at libcoreclr.so's first page,
 * kept in `context`. */
static int is_coreclr(const struct process_mapping *mapping, void *context)
{
	static const char NAME[] = "/libcoreclr.so";
	struct coreclr_mapping *found = context;
	size_t length = strlen(mapping->path);

	if (mapping->offset != 0 || length >= sizeof(found->path) || length < sizeof(NAME) - 1 ||
	    memcmp(mapping->path + length - (sizeof(NAME) - 1), NAME, sizeof(NAME) - 1) != 0)
		return 0;
	memcpy(found->path, mapping->path, length + 1);
	found->start = mapping->start;
	found->identity = (struct file_identity){mapping->major, mapping->minor, mapping->inode};
	return 1;
}

static bool find_coreclr(pid_t pid, struct coreclr_mapping *mapping)
{
	return target_process_for_each_mapping(pid, is_coreclr, mapping) == 1;
}

/* The mapped file itself: by its path inside the process's root when that
 * still leads to the same inode, else through /proc/<pid>/map_files. */
static int open_coreclr(pid_t pid, const struct coreclr_mapping *mapping)
{
	int root = target_root_open(pid);
	int fd = root >= 0 ? target_file_open(root, mapping->path, 0) : -1;

	if (root >= 0)
		close(root);
	if (fd >= 0 && file_identity_matches(fd, &mapping->identity))
		return fd;
	if (fd >= 0)
		close(fd);
	return map_files_open(pid, &mapping->identity);
}

bool runtime_descriptor_find(pid_t pid, struct target_memory *memory,
			     struct runtime_descriptor *runtime, char *error, size_t error_size)
{
	struct coreclr_mapping mapping;
	uint64_t first_address, symbol, symbol_size;

	*runtime = (struct runtime_descriptor){0};
	if (!find_coreclr(pid, &mapping)) {
		runtime_memory_error(error, error_size, "process %d maps no libcoreclr.so",
				     (int)pid);
		return false;
	}

	int fd = open_coreclr(pid, &mapping);
	struct elf_file *file = fd >= 0 ? elf_file_open(fd) : NULL;

	if (!file) {
		runtime_memory_error(error, error_size, "cannot open %s of process %d as ELF",
				     mapping.path, (int)pid);
		return false;
	}

	bool found =
	    elf_file_export(file, SYMBOL, &symbol, &symbol_size) &&
	    symbol_size >= DESCRIPTOR_STRUCT_SIZE &&
	    load_segments_find_address(file->segments, file->segment_count, 0, &first_address);

	elf_file_close(file);
	if (!found) {
		runtime_memory_error(error, error_size,
				     "%s exports no %s (a runtime older than .NET 9)", mapping.path,
				     SYMBOL);
		return false;
	}
	snprintf(runtime->coreclr_path, sizeof(runtime->coreclr_path), "%s", mapping.path);
	runtime->load_bias = mapping.start - first_address;
	runtime->address = runtime->load_bias + symbol;
	runtime->contracts =
	    runtime_descriptor_read_at(memory, runtime->address, error, error_size);
	return runtime->contracts != NULL;
}

void runtime_descriptor_release(struct runtime_descriptor *runtime)
{
	contract_descriptor_free(runtime->contracts);
	runtime->contracts = NULL;
}
