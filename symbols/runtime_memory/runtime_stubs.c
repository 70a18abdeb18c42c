#include "runtime_stubs.h"

#include <stdlib.h>
#include <string.h>

enum {
	MAX_PRECODE = 32,	/* bytes of a precode's pattern read */
	MAX_PAGE = 1 << 20,	/* of StubCodePageSize */
	DESCRIPTOR_BYTES = 160, /* of the PrecodeMachineDescriptor read */
};

/* The StubPrecode kinds told apart by their data's type byte. */
enum {
	TYPE_STUB,
	TYPE_PINVOKE,
	TYPE_THIS_PTR,
	TYPE_UM_ENTRY,
	TYPE_COUNT,
};

/* The precode machine descriptor's fields, offsets in it. */
struct runtime_stubs {
	uint64_t platform_metadata;
	uint32_t machine_descriptor; /* PlatformMetadata.PrecodeMachineDescriptor */
	uint32_t page_size, fixup_size, fixup_bytes, fixup_ignored;
	uint32_t stub_size, stub_bytes, stub_ignored;
	uint32_t types[TYPE_COUNT]; /* of the StubPrecode type bytes, by TYPE_ */
	uint32_t fixup_method_desc, stub_secret, stub_type;
};

struct runtime_stubs *runtime_stubs_new(const struct contract_descriptor *descriptor)
{
	struct runtime_stubs *stubs = calloc(1, sizeof(*stubs));
	uint32_t version;

	if (!stubs)
		return NULL;

	const struct {
		const char *type, *field;
		uint32_t *offset;
	} fields[] = {
	    {"PlatformMetadata", "PrecodeMachineDescriptor", &stubs->machine_descriptor},
	    {"PrecodeMachineDescriptor", "StubCodePageSize", &stubs->page_size},
	    {"PrecodeMachineDescriptor", "FixupStubPrecodeSize", &stubs->fixup_size},
	    {"PrecodeMachineDescriptor", "FixupBytes", &stubs->fixup_bytes},
	    {"PrecodeMachineDescriptor", "FixupIgnoredBytes", &stubs->fixup_ignored},
	    {"PrecodeMachineDescriptor", "StubPrecodeSize", &stubs->stub_size},
	    {"PrecodeMachineDescriptor", "StubBytes", &stubs->stub_bytes},
	    {"PrecodeMachineDescriptor", "StubIgnoredBytes", &stubs->stub_ignored},
	    {"PrecodeMachineDescriptor", "StubPrecodeType", &stubs->types[TYPE_STUB]},
	    {"PrecodeMachineDescriptor", "PInvokeImportPrecodeType", &stubs->types[TYPE_PINVOKE]},
	    {"PrecodeMachineDescriptor", "ThisPointerRetBufPrecodeType",
	     &stubs->types[TYPE_THIS_PTR]},
	    {"PrecodeMachineDescriptor", "UMEntryPrecodeType", &stubs->types[TYPE_UM_ENTRY]},
	    {"FixupPrecodeData", "MethodDesc", &stubs->fixup_method_desc},
	    {"StubPrecodeData", "SecretParam", &stubs->stub_secret},
	    {"StubPrecodeData", "Type", &stubs->stub_type},
	};

	if (!contract_descriptor_contract(descriptor, "PrecodeStubs", &version) || version != 3 ||
	    !contract_descriptor_global(descriptor, "PlatformMetadata", &stubs->platform_metadata))
		goto refused;
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
		if (!contract_descriptor_field(descriptor, fields[i].type, fields[i].field,
					       fields[i].offset) ||
		    (!strcmp(fields[i].type, "PrecodeMachineDescriptor") &&
		     *fields[i].offset > DESCRIPTOR_BYTES - MAX_PRECODE))
			goto refused;
	return stubs;
refused:
	free(stubs);
	return NULL;
}

void runtime_stubs_free(struct runtime_stubs *stubs)
{
	free(stubs);
}

/* `code` is `pattern` but where `ignored` says to skip. */
static bool matches(const uint8_t *code, const uint8_t *pattern, const uint8_t *ignored,
		    uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		if (!ignored[i] && code[i] != pattern[i])
			return false;
	return true;
}

/* The kind of a StubPrecode by its data's type byte, and whether its
 * secret parameter is the MethodDesc it leads to. */
static const char *stub_precode_kind(const struct runtime_stubs *stubs, const uint8_t *machine,
				     uint8_t type, bool *leads_to_method)
{
	static const char *const kinds[TYPE_COUNT] = {
	    [TYPE_STUB] = "StubPrecode",
	    [TYPE_PINVOKE] = "PInvokeImportPrecode",
	    [TYPE_THIS_PTR] = "ThisPtrRetBufPrecode",
	    [TYPE_UM_ENTRY] = "UMEntryThunk",
	};

	for (int kind = TYPE_STUB; kind < TYPE_COUNT; kind++)
		if (type == machine[stubs->types[kind]]) {
			*leads_to_method = kind == TYPE_STUB || kind == TYPE_PINVOKE;
			return kinds[kind];
		}
	*leads_to_method = false;
	return "StubPrecode";
}

/* A precode holding `address`, by the machine descriptor's patterns. */
static bool find_precode(const struct runtime_stubs *stubs, struct target_memory *memory,
			 uint64_t address, struct runtime_stub *stub)
{
	uint8_t machine[DESCRIPTOR_BYTES], code[MAX_PRECODE];

	/* the global is the address of the runtime's PlatformMetadata */
	if (!stubs ||
	    !target_memory_read(memory, stubs->platform_metadata + stubs->machine_descriptor,
				machine, sizeof(machine)))
		return false;

	uint32_t page_size;
	uint32_t fixup_size = machine[stubs->fixup_size], stub_size = machine[stubs->stub_size];
	uint32_t size = fixup_size > stub_size ? fixup_size : stub_size;

	memcpy(&page_size, machine + stubs->page_size, sizeof(page_size));
	if (page_size < 4096 || page_size > MAX_PAGE || (page_size & (page_size - 1)) ||
	    fixup_size < 8 || fixup_size > MAX_PRECODE || stub_size < 8 || stub_size > MAX_PRECODE)
		return false;

	uint64_t page = address & ~(uint64_t)(page_size - 1);

	/* Precodes do not cross their code page; each starts 8-byte aligned. */
	for (uint64_t back = 0; back < size; back += 8) {
		uint64_t start = (address & ~7ull) - back, method_desc = 0;
		uint8_t type;
		bool leads_to_method = true;

		if ((address & ~7ull) < page + back || address - start >= size)
			break;
		if (!target_memory_read(memory, start, code, size))
			return false;
		if (address < start + fixup_size &&
		    matches(code, machine + stubs->fixup_bytes, machine + stubs->fixup_ignored,
			    fixup_size)) {
			stub->kind = "FixupPrecode";
			if (!target_memory_read_u64(
				memory, start + page_size + stubs->fixup_method_desc, &method_desc))
				method_desc = 0;
		} else if (address < start + stub_size &&
			   matches(code, machine + stubs->stub_bytes, machine + stubs->stub_ignored,
				   stub_size)) {
			if (!target_memory_read(memory, start + page_size + stubs->stub_type, &type,
						1) ||
			    type == 0)
				return false;
			stub->kind = stub_precode_kind(stubs, machine, type, &leads_to_method);
			if (!leads_to_method ||
			    !target_memory_read_u64(memory, start + page_size + stubs->stub_secret,
						    &method_desc))
				method_desc = 0;
		} else {
			continue;
		}
		stub->start = start;
		stub->method_desc = method_desc;
		return true;
	}
	return false;
}

/* The stub code page size the machine descriptor gives, or 0. */
static uint32_t stub_page_size(const struct runtime_stubs *stubs, struct target_memory *memory)
{
	uint32_t page_size;

	if (!stubs ||
	    !target_memory_read_u32(
		memory, stubs->platform_metadata + stubs->machine_descriptor + stubs->page_size,
		&page_size) ||
	    page_size < 4096 || page_size > MAX_PAGE || (page_size & (page_size - 1)))
		return 0;
	return page_size;
}

/* A call counting stub (x64, 24 bytes at multiples of 24 in its code
 * page): "mov CELL(%rip),%rax; decw (%rax); je 1f; jmp *METHOD(%rip); 1:
 * jmp *THRESHOLD(%rip)", its data one page after: the counter's cell, the
 * method's code, the tier-up helper. */
static bool find_call_counting_stub(const struct runtime_stubs *stubs, struct target_memory *memory,
				    uint64_t address, struct runtime_stub *stub)
{
	enum { SIZE = 24 };
	uint32_t page_size = stub_page_size(stubs, memory);
	uint64_t page = address & ~(uint64_t)(page_size - 1);
	uint64_t start = page + (address - page) / SIZE * SIZE;
	uint8_t code[SIZE], expected[SIZE] = {0x48, 0x8b, 0x05, 0,    0, 0, 0, 0x66, 0xff, 0x08,
					      0x74, 0x06, 0xff, 0x25, 0, 0, 0, 0,    0xff, 0x25};
	uint32_t displacements[3] = {page_size - 7, page_size + 8 - 18, page_size + 16 - 24};

	if (!page_size || start + SIZE > page + page_size)
		return false;
	memcpy(expected + 3, &displacements[0], 4);
	memcpy(expected + 14, &displacements[1], 4);
	memcpy(expected + 20, &displacements[2], 4);
	if (!target_memory_read(memory, start, code, SIZE) || memcmp(code, expected, SIZE) ||
	    !target_memory_read_u64(memory, start + page_size + 8, &stub->target))
		return false;
	stub->start = start;
	stub->kind = "CallCountingStub";
	return true;
}

/* The runtime's copy of its write barriers (x64): a 4 KiB page of
 * executable memory that begins as libcoreclr's patched code does, "ret"
 * (JIT_PatchedCodeStart), its alignment, then JIT_CheckedWriteBarrier's
 * "lea G_LOWEST(%rip),%rax; cmp (%rax),%rdi". */
static bool find_write_barrier(struct target_memory *memory, uint64_t address,
			       struct runtime_stub *stub)
{
	static const uint8_t start[] = {0xc3, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00,
					0x00, 0x00, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x48, 0x8d,
					0x05, 0,    0,	  0,	0,    0x48, 0x3b, 0x38};
	uint8_t code[sizeof(start)];
	uint64_t page = address & ~4095ull;

	if (!target_memory_read(memory, page, code, sizeof(code)) || memcmp(code, start, 19) ||
	    memcmp(code + 23, start + 23, sizeof(start) - 23))
		return false;
	stub->start = page;
	stub->kind = "WriteBarrier";
	return true;
}

bool runtime_stubs_find_unlisted(const struct runtime_stubs *stubs, struct target_memory *memory,
				 uint64_t address, struct runtime_stub *stub)
{
	memset(stub, 0, sizeof(*stub));
	return find_call_counting_stub(stubs, memory, address, stub) ||
	       find_write_barrier(memory, address, stub);
}

void runtime_stubs_find(const struct runtime_stubs *stubs, struct target_memory *memory,
			uint64_t address, struct runtime_stub *stub)
{
	memset(stub, 0, sizeof(*stub));
	if (find_precode(stubs, memory, address, stub))
		return;
	stub->start = address;
	stub->kind = "runtime stub";
}
