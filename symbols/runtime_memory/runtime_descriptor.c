#include "runtime_descriptor.h"

#include "elf_file.h"
#include "mapped_file.h"
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
	/* a process with more mappings than this is not searched further */
	MAX_MAPS_LINES = 1 << 20,
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

static bool find_coreclr(pid_t pid, struct coreclr_mapping *mapping)
{
	char maps_path[64];

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)pid);

	FILE *maps = fopen(maps_path, "re");
	char *line = NULL;
	size_t capacity = 0;
	bool found = false;

	if (!maps)
		return false;
	for (size_t lines = 0;
	     !found && lines < MAX_MAPS_LINES && getline(&line, &capacity, maps) > 0; lines++) {
		uint64_t start, end, offset, inode;
		unsigned major, minor;
		int path_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, &offset, &major, &minor, &inode, &path_at) < 6 ||
		    !path_at || offset != 0)
			continue;

		char *path = line + path_at;
		size_t length = strcspn(path, "\n");
		static const char NAME[] = "/libcoreclr.so";

		if (length >= sizeof(mapping->path) || length < sizeof(NAME) - 1 ||
		    memcmp(path + length - (sizeof(NAME) - 1), NAME, sizeof(NAME) - 1) != 0)
			continue;
		memcpy(mapping->path, path, length);
		mapping->path[length] = '\0';
		mapping->start = start;
		mapping->identity = (struct file_identity){major, minor, inode};
		found = true;
	}
	free(line);
	fclose(maps);
	return found;
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
