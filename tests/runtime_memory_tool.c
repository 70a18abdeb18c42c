/* Reads a live .NET runtime's contract descriptor from its memory, for the
 * end-to-end test of that route:
 *
 *     runtime_memory_tool PID [--lookup]
 *
 * prints what it found, one item a line ("coreclr PATH", "descriptor
 * ADDRESS", "global NAME VALUE", "field TYPE.FIELD OFFSET", "contract NAME
 * VERSION"), for the types, fields and globals that mapping a code address
 * to its method needs (the ExecutionManager and RuntimeTypeSystem
 * contracts), then the range section map's top level read through them
 * ("range_map_top ADDRESS") and what the reading cost ("cost READS BYTES").
 * Exits 1, saying why on stderr, when the process has no descriptor or it
 * lacks one of them.
 *
 * With --lookup it then reads lines "ADDRESS [RUNTIME_NAME]" (ADDRESS in
 * hex) from stdin, and prints for each, tab-separated, ADDRESS, the start
 * of the method's JIT code, its MethodDef token, its module's file and its
 * readable name, as the runtime's memory gives them (runtime_names.h), or
 * ADDRESS and "??"; then, when the line gave one, RUNTIME_NAME made
 * readable (managed_name.h), for the test to compare. */
#include "managed_name.h"
#include "runtime_descriptor.h"
#include "runtime_names.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CONTRACTS[] = {"ExecutionManager", "RuntimeTypeSystem", "Loader"};
static const char *const GLOBALS[] = {"ExecutionManagerCodeRangeMapAddress", "MethodDescAlignment",
				      "MethodDescTokenRemainderBitCount"};
static const char *const FIELDS[][2] = {
    {"RangeSectionMap", "TopLevelData"},
    {"RangeSectionFragment", "RangeBegin"},
    {"RangeSectionFragment", "RangeEndOpen"},
    {"RangeSectionFragment", "RangeSection"},
    {"RangeSectionFragment", "Next"},
    {"RangeSection", "RangeBegin"},
    {"RangeSection", "RangeEndOpen"},
    {"RangeSection", "Flags"},
    {"RangeSection", "JitManager"},
    {"RangeSection", "HeapList"},
    {"RangeSection", "R2RModule"},
    {"CodeHeapListNode", "StartAddress"},
    {"CodeHeapListNode", "EndAddress"},
    {"CodeHeapListNode", "MapBase"},
    {"CodeHeapListNode", "HeaderMap"},
    {"RealCodeHeader", "MethodDesc"},
    {"MethodDesc", "ChunkIndex"},
    {"MethodDesc", "Slot"},
    {"MethodDesc", "Flags"},
    {"MethodDesc", "Flags3AndTokenRemainder"},
    {"MethodDescChunk", "MethodTable"},
    {"MethodDescChunk", "FlagsAndTokenRange"},
    {"MethodTable", "Module"},
    {"Module", "Path"},
};

/* The addresses on stdin, each with its own budget, as a sampler would
 * give each sample's. */
static int look_up(const struct runtime_descriptor *runtime, struct target_memory *memory)
{
	char error[512], line[4096], name[1024];
	struct runtime_names *names =
	    runtime_names_new(runtime->contracts, -1, error, sizeof(error));
	struct code_owner owner;
	uint64_t reads = 0;

	if (!names) {
		fprintf(stderr, "runtime_memory_tool: %s\n", error);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *end;
		uint64_t address = strtoull(line, &end, 16);

		line[strcspn(line, "\n")] = '\0';
		target_memory_init(memory, memory->pid, 1u << 20, 1);
		if (runtime_names_lookup(names, memory, address, name, sizeof(name), &owner))
			printf("0x%" PRIx64 "\t0x%" PRIx64 "\t0x%08" PRIx32 "\t%s\t%s", address,
			       owner.start, owner.token, owner.module_path, name);
		else
			printf("0x%" PRIx64 "\t??", address);
		if (*end == ' ') {
			char *expected = managed_name_readable(end + 1, false);

			printf("\t%s", expected ? expected : end + 1);
			free(expected);
		}
		printf("\n");
		reads += memory->reads;
	}
	fprintf(stderr, "runtime_memory_tool: %" PRIu64 " reads of the target's memory\n", reads);
	runtime_names_free(names);
	return 0;
}

int main(int argc, char **argv)
{
	struct target_memory memory;
	struct runtime_descriptor runtime;
	char error[512];
	uint32_t number;
	uint64_t value, top;
	int status = 0;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--lookup") != 0)) {
		fprintf(stderr, "usage: %s PID [--lookup]\n", argv[0]);
		return 2;
	}
	target_memory_init(&memory, (pid_t)atoi(argv[1]), 4u << 20, 5);
	if (!runtime_descriptor_find(memory.pid, &memory, &runtime, error, sizeof(error))) {
		fprintf(stderr, "runtime_memory_tool: %s\n", error);
		return 1;
	}
	printf("coreclr %s\ndescriptor 0x%" PRIx64 "\n", runtime.coreclr_path, runtime.address);
	for (size_t i = 0; i < sizeof(CONTRACTS) / sizeof(*CONTRACTS); i++) {
		if (contract_descriptor_contract(runtime.contracts, CONTRACTS[i], &number))
			printf("contract %s %" PRIu32 "\n", CONTRACTS[i], number);
		else {
			fprintf(stderr, "no contract %s\n", CONTRACTS[i]);
			status = 1;
		}
	}
	for (size_t i = 0; i < sizeof(GLOBALS) / sizeof(*GLOBALS); i++) {
		if (contract_descriptor_global(runtime.contracts, GLOBALS[i], &value))
			printf("global %s 0x%" PRIx64 "\n", GLOBALS[i], value);
		else {
			fprintf(stderr, "no global %s\n", GLOBALS[i]);
			status = 1;
		}
	}
	for (size_t i = 0; i < sizeof(FIELDS) / sizeof(*FIELDS); i++) {
		if (contract_descriptor_field(runtime.contracts, FIELDS[i][0], FIELDS[i][1],
					      &number))
			printf("field %s.%s %" PRIu32 "\n", FIELDS[i][0], FIELDS[i][1], number);
		else {
			fprintf(stderr, "no field %s.%s\n", FIELDS[i][0], FIELDS[i][1]);
			status = 1;
		}
	}
	if (contract_descriptor_global(runtime.contracts, "ExecutionManagerCodeRangeMapAddress",
				       &value) &&
	    contract_descriptor_field(runtime.contracts, "RangeSectionMap", "TopLevelData",
				      &number) &&
	    target_memory_read_u64(&memory, value + number, &top))
		printf("range_map_top 0x%" PRIx64 "\n", top);
	else {
		fprintf(stderr, "cannot read the range section map\n");
		status = 1;
	}
	printf("cost %" PRIu64 " %" PRIu64 "\n", memory.reads,
	       (uint64_t)(4u << 20) - memory.bytes_left);
	if (argc == 3 && status == 0)
		status = look_up(&runtime, &memory);
	runtime_descriptor_release(&runtime);
	return status;
}
