/* Which of the runtime's stubs an address of its stub heaps (a range
 * section that is a range list: code_map.h) is in, read from its memory.
 *
 * Precodes (PrecodeStubs contract, version 3: .NET 10) are recognized by
 * the byte patterns of the descriptor's PrecodeMachineDescriptor: a
 * FixupPrecode or StubPrecode starts at a multiple of 8 bytes at most its
 * size before the address, its data (the MethodDesc it leads to, the
 * StubPrecode's exact kind) one stub code page (StubCodePageSize) after
 * its code. (Virtual call stubs, dynamic helpers and jump stubs live in
 * code heaps, whose headers give their kind: code_map.h.) Every read is
 * bounded (target_memory.h): the machine descriptor, at most three
 * candidates of one precode size and their data. */
#ifndef PROFCPU_RUNTIME_STUBS_H
#define PROFCPU_RUNTIME_STUBS_H

#include "contract_descriptor.h"
#include "target_memory.h"

#include <stdbool.h>
#include <stdint.h>

struct runtime_stubs;

/* A stub found: its start (the address itself where it is not known), its
 * kind as the runtime's perf map names stubs ("FixupPrecode",
 * "StubPrecode"), and the MethodDesc it leads to (0: none). */
struct runtime_stub {
	uint64_t start, method_desc;
	uint64_t target; /* the code it leads to, where that is known instead */
	const char *kind;
};

/* The descriptor's offsets for precodes; NULL when it has no PrecodeStubs
 * version 3 (stubs are then named "runtime stub"). */
struct runtime_stubs *runtime_stubs_new(const struct contract_descriptor *descriptor);
void runtime_stubs_free(struct runtime_stubs *stubs);

/* The stub holding `address` (`stubs` may be NULL); always a kind, at
 * worst "runtime stub". */
void runtime_stubs_find(const struct runtime_stubs *stubs, struct target_memory *memory,
			uint64_t address, struct runtime_stub *stub);

/* Runtime code no range section lists, by its shape (x64, .NET 10): a
 * call counting stub (tiered compilation counts a method's calls through
 * it; `target` is the method's code) or the page the runtime copies its
 * write barriers into. False when `address` is neither. */
bool runtime_stubs_find_unlisted(const struct runtime_stubs *stubs, struct target_memory *memory,
				 uint64_t address, struct runtime_stub *stub);

#endif
