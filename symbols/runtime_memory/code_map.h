/* From an instruction pointer to the method whose JIT code holds it, read
 * from the runtime's memory as its ExecutionManager contract (versions 1
 * and 2) describes: the range section map (five levels of 256 pointers on
 * a 64-bit target, indexed by address bits 56..17) leads to the range
 * section fragments of the address's 128 KiB chunk, the fragment to its
 * range section, a code heap's to its node; the node's nibble map gives the
 * start of the code, the pointer before the start its code header, the
 * header its MethodDesc. The RuntimeTypeSystem contract then gives the
 * MethodDesc's chunk, MethodTable, module and MethodDef token, the Loader
 * contract the module's path.
 *
 * Every pointer is the target's: each read is bounded (target_memory.h),
 * lists are followed a bounded number of steps, and what is found must
 * agree with itself (the start at or before the address, inside the code
 * heap; a MethodDef token) or nothing is named. The runtime's stubs are
 * named by their kind (runtime_stubs.h: the range sections that are range
 * lists hold precodes and virtual call stubs; a code heap's stubs have a
 * small number for a header), with the method a precode leads to.
 * ReadyToRun images' code is not looked up here (its names come from the
 * image files). */
#ifndef PROFCPU_CODE_MAP_H
#define PROFCPU_CODE_MAP_H

#include "contract_descriptor.h"
#include "target_memory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct code_map;

/* The method of JIT code at an address. */
struct code_owner {
	uint64_t start;	      /* of the method's code */
	uint64_t method_desc; /* the runtime's MethodDesc */
	uint64_t module;      /* its Module */
	uint32_t token;	      /* MethodDef token (0x06......) in the module; 0 for a
				 dynamic method */
	/* its MethodTable: its type's, or that of the instantiation whose
	 * code it is (the one code of List<string> and List<object> is
	 * List<__Canon>'s) */
	uint64_t method_table;
	/* a dynamic method's own name (LCG, IL stubs: "IL_STUB_PInvoke"), else
	 * "" */
	char dynamic_name[256];
	/* the module's file as the runtime loaded it, UTF-8, or for an
	 * assembly stored in a single-file app "EXECUTABLE/NAME"
	 * (managed_images.h); "" when it has none (a module made in memory) */
	char module_path[512];
	/* a stub's kind ("FixupPrecode", "VSD_VTableStub"; the method fields
	 * are those of the method it leads to, token 0 when none), else "" */
	char stub_kind[32];
};

/* The offsets and globals the lookups need, from `descriptor`. NULL, with
 * the reason in `error`, when the descriptor lacks one or its
 * ExecutionManager contract is a version this reader does not know. */
struct code_map *code_map_new(const struct contract_descriptor *descriptor, char *error,
			      size_t error_size);
void code_map_free(struct code_map *map);

/* Finds the method whose JIT code holds `address`, or the stub, reading
 * through `memory`. False when neither is there, or what the memory holds
 * does not agree with itself. */
bool code_map_lookup(const struct code_map *map, struct target_memory *memory, uint64_t address,
		     struct code_owner *owner);

/* The file of the runtime's Module at `module`, as it loaded it (UTF-8,
 * code units outside ASCII as '?'), or "EXECUTABLE/NAME" for an assembly
 * stored in a single-file app, into `path` (`size` bytes); "" when it has
 * none or its memory does not give one whole. */
void code_map_module_path(const struct code_map *map, struct target_memory *memory, uint64_t module,
			  char *path, size_t size);

#endif
