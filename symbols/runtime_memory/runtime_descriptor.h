/* Finding a live .NET runtime's contract descriptor (.NET 9 and later)
 * without its help: libcoreclr.so exports the data symbol
 * DotNetRuntimeContractDescriptor (so does a .NET 10 single-file app's
 * executable, the runtime linked in; .NET 9's does not), a 40-byte struct
 *
 *   u64 magic "DNCCDAC\0"; u32 flags; u32 descriptor_size;
 *   pointer descriptor (the JSON text, descriptor_size bytes);
 *   u32 pointer_data_count; u32 padding; pointer pointer_data
 *
 * The symbol's address comes from the library's file (its .dynsym) plus
 * where the process mapped it (/proc/<pid>/maps); the rest is read from the
 * process's memory, bounded: the JSON up to 1 MiB, the pointer data up to
 * 64 Ki entries. Nothing is written and the runtime is not asked. */
#ifndef PROFCPU_RUNTIME_DESCRIPTOR_H
#define PROFCPU_RUNTIME_DESCRIPTOR_H

#include "contract_descriptor.h"
#include "target_memory.h"

#include <limits.h>
#include <stdint.h>

struct runtime_descriptor {
	/* libcoreclr.so or the single-file executable, as the process maps it */
	char coreclr_path[PATH_MAX];
	uint64_t load_bias; /* added to the file's addresses */
	uint64_t address;   /* of DotNetRuntimeContractDescriptor */
	struct contract_descriptor *contracts;
};

/* Finds and reads the descriptor of the runtime in `pid`, reading through
 * `memory`: in libcoreclr.so, or where none is mapped in the executable.
 * False, with the reason in `error`, when the process maps no libcoreclr.so
 * and its executable holds no runtime, the runtime exports no descriptor
 * (.NET 8 and older, a .NET 9 single-file app), or what is read is not
 * one. On success runtime_descriptor_release() frees it. */
bool runtime_descriptor_find(pid_t pid, struct target_memory *memory,
			     struct runtime_descriptor *runtime, char *error, size_t error_size);
void runtime_descriptor_release(struct runtime_descriptor *runtime);

/* Reads and parses the descriptor struct at the target's `address`. NULL,
 * with the reason in `error`, when it is not one. */
struct contract_descriptor *runtime_descriptor_read_at(struct target_memory *memory,
						       uint64_t address, char *error,
						       size_t error_size);

#endif
