#include "runtime_descriptor.h"

#include "elf_file.h"
#include "mapped_file.h"
#include "process_maps.h"
#include "target_file.h"
#include "target_root.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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

/* The mapping of the runtime's image's first page (file offset 0) in
 * `pid`: libcoreclr.so, or a single-file app's executable. */
struct runtime_image {
	uint64_t start;
	struct file_identity identity;
	char path[PATH_MAX];
};

/* Keeps `mapping` in `image`; false when its path does not fit. */
static bool keep_image(const struct process_mapping *mapping, struct runtime_image *image)
{
	size_t length = strlen(mapping->path);

	if (length >= sizeof(image->path))
		return false;
	memcpy(image->path, mapping->path, length + 1);
	image->start = mapping->start;
	image->identity = (struct file_identity){mapping->major, mapping->minor, mapping->inode};
	return true;
}

/* target_process_for_each_mapping(): 1 at libcoreclr.so's first page,
 * kept in `context`. */
static int is_coreclr(const struct process_mapping *mapping, void *context)
{
	static const char NAME[] = "/libcoreclr.so";
	size_t length = strlen(mapping->path);

	return mapping->offset == 0 && length >= sizeof(NAME) - 1 &&
	       memcmp(mapping->path + length - (sizeof(NAME) - 1), NAME, sizeof(NAME) - 1) == 0 &&
	       keep_image(mapping, context);
}

/* The mapped file itself: by its path inside the process's root when that
 * still leads to the same inode, else through /proc/<pid>/map_files. */
static int open_coreclr(pid_t pid, const struct runtime_image *image)
{
	int root = target_root_open(pid);
	int fd = root >= 0 ? target_file_open(root, image->path, 0) : -1;

	if (root >= 0)
		close(root);
	if (fd >= 0 && file_identity_matches(fd, &image->identity))
		return fd;
	if (fd >= 0)
		close(fd);
	return map_files_open(pid, &image->identity);
}

/* The executable's inode, for is_executable(). */
struct executable_search {
	uint64_t inode;
	struct runtime_image *image;
};

/* target_process_for_each_mapping(): 1 at the executable's first page (its
 * inode: through overlayfs the device differs). */
static int is_executable(const struct process_mapping *mapping, void *context)
{
	struct executable_search *search = context;

	return mapping->offset == 0 && mapping->inode == search->inode &&
	       keep_image(mapping, search->image);
}

/* A single-file app links the runtime into its executable (the host):
 * the executable opened through /proc/<pid>/exe, and where the process
 * maps its first page. -1 when it maps none. */
static int open_executable(pid_t pid, struct runtime_image *image)
{
	char path[64];
	struct stat status;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;

	struct executable_search search = {0, image};

	if (fstat(fd, &status) == 0 && S_ISREG(status.st_mode)) {
		search.inode = status.st_ino;
		if (target_process_for_each_mapping(pid, is_executable, &search) == 1)
			return fd;
	}
	close(fd);
	return -1;
}

bool runtime_descriptor_find(pid_t pid, struct target_memory *memory,
			     struct runtime_descriptor *runtime, char *error, size_t error_size)
{
	struct runtime_image image;
	uint64_t first_address, symbol, symbol_size;
	bool single_file = false;
	int fd;

	*runtime = (struct runtime_descriptor){0};
	if (target_process_for_each_mapping(pid, is_coreclr, &image) == 1) {
		fd = open_coreclr(pid, &image);
	} else {
		fd = open_executable(pid, &image);
		single_file = true;
		if (fd < 0) {
			runtime_memory_error(error, error_size, "process %d maps no libcoreclr.so",
					     (int)pid);
			return false;
		}
	}

	struct elf_file *file = fd >= 0 ? elf_file_open(fd) : NULL;

	if (!file) {
		runtime_memory_error(error, error_size, "cannot open %s of process %d as ELF",
				     image.path, (int)pid);
		return false;
	}

	bool found =
	    elf_file_export(file, SYMBOL, &symbol, &symbol_size) &&
	    symbol_size >= DESCRIPTOR_STRUCT_SIZE &&
	    load_segments_find_address(file->segments, file->segment_count, 0, &first_address);
	bool holds_runtime = !single_file || elf_file_exports(file, "DotNetRuntimeInfo");

	elf_file_close(file);
	if (!found) {
		if (!holds_runtime)
			runtime_memory_error(error, error_size,
					     "process %d maps no libcoreclr.so and its executable "
					     "holds no runtime",
					     (int)pid);
		else
			runtime_memory_error(error, error_size,
					     "%s exports no %s (a runtime older than .NET %d)",
					     image.path, SYMBOL, single_file ? 10 : 9);
		return false;
	}
	snprintf(runtime->coreclr_path, sizeof(runtime->coreclr_path), "%s", image.path);
	runtime->load_bias = image.start - first_address;
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
