/* The route from the .NET runtime's memory: the bounded reader of a
 * process's memory (on this process's own), the contract descriptor's JSON
 * as .NET 10.0.12 wrote it (tests/data, argv[1]) and hostile variants of
 * it, the descriptor struct read from memory, and a code heap with one
 * method laid out as .NET 10.0.12 lays them out, looked up whole and
 * corrupted, and generic types' MethodTables and dictionaries, walked
 * whole and corrupted (fakes in this process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "code_map.h"
#include "contract_descriptor.h"
#include "generic_arguments.h"
#include "runtime_descriptor.h"
#include "target_memory.h"
#include "whole_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static const char *descriptor_path;

static struct contract_descriptor *parse(const char *json, const uint64_t *pointers, size_t count)
{
	char error[256] = "";
	struct contract_descriptor *descriptor =
	    contract_descriptor_parse(json, strlen(json), pointers, count, error, sizeof(error));

	if (!descriptor)
		print_message("refused: %s\n", error);
	return descriptor;
}

/* The offsets and globals the ExecutionManager and RuntimeTypeSystem
 * contracts need, as .NET 10.0.12 on x64 describes them. */
static void test_real_descriptor(void **state)
{
	size_t size;
	uint8_t *json = read_whole(descriptor_path, &size);
	uint64_t pointers[24];
	char error[256];
	uint32_t offset, version;
	uint64_t value;

	(void)state;
	for (size_t i = 0; i < 24; i++)
		pointers[i] = 0x7f0000000000 + i * 8;

	struct contract_descriptor *descriptor =
	    contract_descriptor_parse((const char *)json, size, pointers, 24, error, sizeof(error));

	assert_non_null(descriptor);
	assert_true(contract_descriptor_contract(descriptor, "ExecutionManager", &version));
	assert_int_equal(version, 2);
	assert_true(contract_descriptor_contract(descriptor, "RuntimeTypeSystem", &version));
	assert_int_equal(version, 1);
	assert_true(
	    contract_descriptor_field(descriptor, "RangeSectionMap", "TopLevelData", &offset));
	assert_int_equal(offset, 0);
	assert_true(contract_descriptor_field(descriptor, "RangeSection", "RangeEndOpen", &offset));
	assert_int_equal(offset, 8);
	assert_true(contract_descriptor_field(descriptor, "RangeSection", "HeapList", &offset));
	assert_int_equal(offset, 40);
	assert_true(
	    contract_descriptor_field(descriptor, "CodeHeapListNode", "HeaderMap", &offset));
	assert_int_equal(offset, 40);
	assert_true(contract_descriptor_field(descriptor, "RealCodeHeader", "MethodDesc", &offset));
	assert_int_equal(offset, 24);
	/* a field given with its type: [304, "GCHandle"] */
	assert_true(contract_descriptor_field(descriptor, "Thread", "GCHandle", &offset));
	assert_int_equal(offset, 304);
	assert_true(contract_descriptor_type_size(descriptor, "MethodDesc", &offset));
	assert_int_equal(offset, 16);
	assert_false(contract_descriptor_type_size(descriptor, "RangeSection", &offset));
	assert_false(contract_descriptor_field(descriptor, "MethodDesc", "!", &offset));
	assert_false(contract_descriptor_field(descriptor, "MethodDesc", "NoSuchField", &offset));
	assert_false(contract_descriptor_field(descriptor, "NoSuchType", "Slot", &offset));

	/* [[20], "pointer"]: the 20th pointer */
	assert_true(
	    contract_descriptor_global(descriptor, "ExecutionManagerCodeRangeMapAddress", &value));
	assert_int_equal(value, pointers[20]);
	/* ["0x8", "uint64"] and a value above INT64_MAX */
	assert_true(contract_descriptor_global(descriptor, "MethodDescAlignment", &value));
	assert_int_equal(value, 8);
	assert_true(contract_descriptor_global(descriptor, "StaticsPointerMask", &value));
	assert_true(value == 0xfffffffffffffffe);
	assert_string_equal(contract_descriptor_global_string(descriptor, "Architecture"), "x64");
	assert_false(contract_descriptor_global(descriptor, "Architecture", &value));
	assert_null(contract_descriptor_global_string(descriptor, "MethodDescAlignment"));
	assert_false(contract_descriptor_global(descriptor, "NoSuchGlobal", &value));
	contract_descriptor_free(descriptor);

	/* the same with too few pointers: the index points past them */
	descriptor =
	    contract_descriptor_parse((const char *)json, size, pointers, 20, error, sizeof(error));
	assert_non_null(descriptor);
	assert_false(
	    contract_descriptor_global(descriptor, "ExecutionManagerCodeRangeMapAddress", &value));
	contract_descriptor_free(descriptor);
	free(json);
}

static void test_hostile_descriptors(void **state)
{
	static const char *const refused[] = {
	    "",
	    "not json",
	    "[1, 2]",
	    "{\"types\": {}}",
	    "{\"version\": 0, \"baseline\": \"net9.0/coreclr/linux-x64\"}",
	    "{\"version\": 0, \"types\": []}",
	    "{\"version\": 0} trailing",
	    "{\"version\": 0, \"types\": {\"a\": {\"b\": [[[[[[[[[[1]]]]]]]]]]}}}",
	    "{\"version\": 0",
	};
	static const uint64_t pointers[] = {0x1000};
	uint32_t offset;
	uint64_t value;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
		assert_null(parse(refused[i], pointers, 1));

	/* parsed, but each lookup checks what it finds */
	struct contract_descriptor *descriptor = parse(
	    "{\"version\": 0, \"types\": {\"T\": {\"!\": -1, \"neg\": -8, \"big\": 4294967296, "
	    "\"text\": \"8\", \"pair\": [8], \"float\": 8.5, \"bad\": [8, 9]}, \"U\": 3}, "
	    "\"globals\": {\"far\": [[1]], \"neg\": [[-1]], \"minus\": \"-1\", \"hex\": \"0x1g\", "
	    "\"obj\": {}, \"nested\": [[0], \"pointer\", 3], \"ok\": [[0]]}, "
	    "\"contracts\": {\"A\": \"1\", \"B\": -1}}\n",
	    pointers, 1);

	assert_non_null(descriptor);
	assert_false(contract_descriptor_type_size(descriptor, "T", &offset));
	assert_false(contract_descriptor_type_size(descriptor, "U", &offset));
	static const char *const fields[] = {"neg", "big", "text", "pair", "float", "bad"};
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
		assert_false(contract_descriptor_field(descriptor, "T", fields[i], &offset));
	assert_false(contract_descriptor_field(descriptor, "U", "x", &offset));
	static const char *const globals[] = {"far", "neg", "minus", "hex", "obj", "nested"};
	for (size_t i = 0; i < sizeof(globals) / sizeof(*globals); i++)
		assert_false(contract_descriptor_global(descriptor, globals[i], &value));
	assert_true(contract_descriptor_global(descriptor, "ok", &value));
	assert_int_equal(value, 0x1000);
	assert_false(contract_descriptor_contract(descriptor, "A", &offset));
	assert_false(contract_descriptor_contract(descriptor, "B", &offset));
	contract_descriptor_free(descriptor);
}

/* Skips a test that reads this process's memory as a target's where the
 * kernel cannot read it so: under qemu-user (the arm64 unit tests), whose
 * guest addresses are not the host's. */
static void skip_without_own_memory(void)
{
	static const char probe[] = "probe";
	char copy[sizeof(probe)] = "";
	struct iovec local = {copy, sizeof(copy)}, remote = {(void *)probe, sizeof(probe)};

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != sizeof(probe) ||
	    memcmp(copy, probe, sizeof(probe)) != 0) {
		print_message("process_vm_readv cannot read this process's own memory here "
			      "(qemu-user?): skipped\n");
		skip();
	}
}

static void test_reads_are_checked_and_bounded(void **state)
{
	static const char bytes[] = "sixteen bytes...";
	char copy[sizeof(bytes)];
	struct target_memory memory;
	uint64_t value;

	(void)state;
	skip_without_own_memory();
	target_memory_init(&memory, getpid(), 40, 60);
	assert_true(target_memory_read(&memory, (uintptr_t)bytes, copy, sizeof(bytes)));
	assert_memory_equal(copy, bytes, sizeof(bytes));
	/* the first page is never mapped */
	assert_false(target_memory_read_u64(&memory, 16, &value));
	assert_false(target_memory_read(&memory, (uintptr_t)bytes, copy, 0));
	assert_false(target_memory_read(&memory, UINT64_MAX - 4, copy, 8));
	assert_false(
	    target_memory_read(&memory, (uintptr_t)bytes, copy, TARGET_MEMORY_MAX_READ + 1));
	assert_null(memory.stopped_by);
	/* 17 + 8 of 40 spent: 16 more do not fit, and nothing more is read */
	assert_false(target_memory_read(&memory, (uintptr_t)bytes, copy, 16));
	assert_string_equal(memory.stopped_by, "the byte budget");
	assert_false(target_memory_read(&memory, (uintptr_t)bytes, copy, 1));

	target_memory_init(&memory, getpid(), 1 << 20, 0);
	nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	assert_false(target_memory_read(&memory, (uintptr_t)bytes, copy, 1));
	assert_string_equal(memory.stopped_by, "the time budget");
}

/* An image's regions read as a process's memory is, under the same bounds;
 * a read must lie inside one region. */
static void test_image_reads(void **state)
{
	static const uint8_t low[8] = "abcdefgh", high[8] = "ijklmnop";
	const struct target_memory_region regions[] = {{0x1000, low, 8}, {0x1008, high, 8}};
	struct target_memory memory;
	uint8_t copy[8];
	uint64_t value;

	(void)state;
	target_memory_init_image(&memory, regions, 2, 30);
	assert_true(target_memory_read(&memory, 0x1009, copy, 7));
	assert_memory_equal(copy, "jklmnop", 7);
	assert_true(target_memory_read_u64(&memory, 0x1000, &value));
	assert_memory_equal(&value, "abcdefgh", 8);
	/* across the regions, past the last, before the first, wrapping */
	assert_false(target_memory_read(&memory, 0x1004, copy, 8));
	assert_false(target_memory_read(&memory, 0x100c, copy, 5));
	assert_false(target_memory_read(&memory, 0xfff, copy, 1));
	assert_false(target_memory_read(&memory, UINT64_MAX - 2, copy, 4));
	assert_null(memory.stopped_by);
	/* 7 + 8 + 8 + 5 + 1 of 30 spent (a wrapping read is refused
	 * before): the byte budget stops the next */
	assert_false(target_memory_read(&memory, 0x1000, copy, 2));
	assert_string_equal(memory.stopped_by, "the byte budget");
	/* no regions: nothing is read, not a process either */
	target_memory_init_image(&memory, regions, 0, 24);
	assert_false(target_memory_read(&memory, 0x1000, copy, 1));
}

/* A descriptor struct as libcoreclr.so exports it. */
struct fake_descriptor {
	uint64_t magic;
	uint32_t flags, json_size;
	uint64_t json;
	uint32_t pointer_count, padding;
	uint64_t pointers;
};

static struct contract_descriptor *read_fake(const struct fake_descriptor *fake, char *error)
{
	struct target_memory memory;

	target_memory_init(&memory, getpid(), 1 << 22, 60);
	return runtime_descriptor_read_at(&memory, (uintptr_t)fake, error, 256);
}

static void test_descriptor_in_memory(void **state)
{
	static const char json[] = "{\"version\": 0, \"baseline\": \"empty\", "
				   "\"globals\": {\"G\": [[1], \"pointer\"]}}";
	static const uint64_t pointers[] = {0, 0xabc0};
	const struct fake_descriptor good = {
	    .magic = 0x0043414443434e44,
	    .flags = 1,
	    .json_size = sizeof(json), /* with its NUL, as a C string */
	    .json = (uintptr_t)json,
	    .pointer_count = 2,
	    .pointers = (uintptr_t)pointers,
	};
	struct fake_descriptor fake;
	char error[256];
	uint64_t value;

	(void)state;
	skip_without_own_memory();
	struct contract_descriptor *descriptor = read_fake(&good, error);
	assert_non_null(descriptor);
	assert_true(contract_descriptor_global(descriptor, "G", &value));
	assert_int_equal(value, 0xabc0);
	contract_descriptor_free(descriptor);

	fake = good;
	fake.magic ^= 1;
	assert_null(read_fake(&fake, error));
	assert_non_null(strstr(error, "magic"));
	fake = good;
	fake.flags = 3;
	assert_null(read_fake(&fake, error));
	assert_non_null(strstr(error, "4-byte pointers"));
	fake = good;
	fake.json_size = (1 << 20) + 1;
	assert_null(read_fake(&fake, error));
	assert_non_null(strstr(error, "out of bounds"));
	fake = good;
	fake.pointer_count = 1u << 31;
	assert_null(read_fake(&fake, error));
	fake = good;
	fake.json = 4096;
	assert_null(read_fake(&fake, error));
	assert_non_null(strstr(error, "cannot read"));
	fake = good;
	fake.json_size = 12; /* cut inside the JSON */
	assert_null(read_fake(&fake, error));
	assert_non_null(strstr(error, "not JSON"));
	assert_null(read_fake((const struct fake_descriptor *)4096, error));
}

/* A runtime's code map in this process's memory, at the offsets .NET
 * 10.0.12 gives (tests/data): the range section map's five levels, one
 * fragment and range section, a code heap of 8 KiB with its nibble map,
 * and one method at heap + 0x100, 0x300 bytes long, with its code header,
 * MethodDesc (MethodDef row 5), chunk, MethodTable and module. */
struct fake_runtime {
	uint64_t levels[5][256];
	uint64_t fragment[4], section[8], heap_node[6], code_header[5];
	uint64_t chunk[3 + 4 * 2]; /* the chunk, then 16-byte MethodDescs */
	uint64_t method_table[8], module[32];
	uint16_t path[16];
	uint32_t header_map[32];
	uint8_t heap[8192] __attribute__((aligned(8192)));
};

static struct fake_runtime fake;
enum { METHOD_AT = 0x100, METHOD_SIZE = 0x300 };
/* The precodes' PrecodeMachineDescriptor (PlatformMetadata's first field),
 * at .NET 10.0.12's offsets, with a stub code page of 4 KiB: the fake
 * heap's first page is code, its second the precodes' data. */
static uint8_t fake_machine[160];

static uint64_t at(const void *pointer)
{
	return (uintptr_t)pointer;
}

static uint8_t *method_desc(void)
{
	return (uint8_t *)&fake.chunk[3] + 2 * 8; /* ChunkIndex 2 */
}

static void build_fake_runtime(void)
{
	uint64_t heap = at(fake.heap);
	uint64_t *slot = fake.levels[0];

	memset(&fake, 0, offsetof(struct fake_runtime, heap));
	/* levels: bits 56..49 index the top, then 8 bits a level down to 17 */
	for (int level = 0; level < 5; level++) {
		uint64_t index = (heap >> (17 + (4 - level) * 8)) & 0xff;

		slot = &fake.levels[level][index];
		*slot = level < 4 ? at(fake.levels[level + 1]) : at(fake.fragment);
	}
	fake.fragment[1] = heap;	/* RangeBegin */
	fake.fragment[2] = heap + 8192; /* RangeEndOpen */
	fake.fragment[3] = at(fake.section);
	fake.section[2] = 2; /* Flags: a code heap */
	fake.section[5] = at(fake.heap_node);
	fake.heap_node[2] = heap; /* StartAddress */
	fake.heap_node[3] = heap + 8192;
	fake.heap_node[4] = heap; /* MapBase */
	fake.heap_node[5] = at(fake.header_map);
	/* the start's nibble: bucket 8 (unit 1, its top nibble), offset 0;
	 * units 2 and 3 lie whole in the method: version 2's pointers */
	fake.header_map[1] = 1u << 28;
	fake.header_map[2] = fake.header_map[3] = METHOD_AT + 9;
	memcpy(fake.heap + METHOD_AT - 8, &(uint64_t){at(fake.code_header)}, 8);
	fake.code_header[3] = at(method_desc());
	method_desc()[2] = 2;			  /* ChunkIndex */
	memcpy(method_desc(), &(uint16_t){5}, 2); /* the token's low bits */
	fake.chunk[0] = at(fake.method_table);	  /* FlagsAndTokenRange 0 */
	fake.chunk[2] = 7; /* Size: 8 units (four MethodDescs); Count, FlagsAndTokenRange 0 */
	fake.method_table[3] = at(fake.module);
	fake.module[25] = at(fake.path);
	for (size_t i = 0; i < sizeof("/app/app.dll") - 1; i++)
		fake.path[i] = (uint16_t) "/app/app.dll"[i];
}

/* The fake runtime's code map from .NET 10.0.12's descriptor with `from`,
 * a piece of its text, made `to`. */
static struct code_map *fake_code_map_edited(const char *from, const char *to)
{
	size_t size;
	char *json = (char *)read_whole(descriptor_path, &size);
	char *found = strstr(json, from);
	uint64_t pointers[24] = {0};
	char error[256];

	assert_non_null(found);

	size_t head = (size_t)(found - json), tail = size - head - strlen(from);
	char *edited = malloc(head + strlen(to) + tail);

	assert_non_null(edited);
	memcpy(edited, json, head);
	memcpy(edited + head, to, strlen(to));
	memcpy(edited + head + strlen(to), found + strlen(from), tail);
	pointers[20] = at(fake.levels[0]);
	pointers[21] = at(fake_machine);

	struct contract_descriptor *descriptor = contract_descriptor_parse(
	    edited, head + strlen(to) + tail, pointers, 24, error, sizeof(error));
	assert_non_null(descriptor);

	struct code_map *map = code_map_new(descriptor, error, sizeof(error));
	assert_non_null(map);
	contract_descriptor_free(descriptor);
	free(edited);
	free(json);
	return map;
}

static struct code_map *fake_code_map(uint32_t version)
{
	char contract[32];

	snprintf(contract, sizeof(contract), "\"ExecutionManager\":%u", version);
	return fake_code_map_edited("\"ExecutionManager\":2", contract);
}

static bool look_up(const struct code_map *map, uint64_t offset, struct code_owner *owner,
		    uint64_t *reads)
{
	struct target_memory memory;

	target_memory_init(&memory, getpid(), 1 << 20, 60);
	bool found = code_map_lookup(map, &memory, at(fake.heap) + offset, owner);
	if (reads)
		*reads = memory.reads;
	return found;
}

static void test_code_map_finds_the_method(void **state)
{
	static const uint64_t inside[] = {METHOD_AT, METHOD_AT + 0x1c, METHOD_AT + 0x150,
					  METHOD_AT + 0x1f0, METHOD_AT + METHOD_SIZE - 1};
	struct code_owner owner;

	(void)state;
	skip_without_own_memory();
	for (uint32_t version = 1; version <= 2; version++) {
		build_fake_runtime();
		if (version == 1) /* no pointers: the lookup scans back */
			fake.header_map[2] = fake.header_map[3] = 0;

		struct code_map *map = fake_code_map(version);

		for (size_t i = 0; i < sizeof(inside) / sizeof(*inside); i++) {
			assert_true(look_up(map, inside[i], &owner, NULL));
			assert_true(owner.start == at(fake.heap) + METHOD_AT);
			assert_true(owner.method_desc == at(method_desc()));
			assert_true(owner.module == at(fake.module));
			assert_int_equal(owner.token, 0x06000005);
			assert_string_equal(owner.module_path, "/app/app.dll");
		}
		/* before the method: no start in its unit or the one before */
		assert_false(look_up(map, 0x40, &owner, NULL));
		code_map_free(map);
	}
}

/* The same lookup from an image of the fake runtime, as the fuzz target
 * reads its input: no process read. */
static void test_code_map_reads_an_image(void **state)
{
	const struct target_memory_region image[] = {
	    {at(&fake), (const uint8_t *)&fake, sizeof(fake)}};
	struct target_memory memory;
	struct code_owner owner;

	(void)state;
	build_fake_runtime();
	struct code_map *map = fake_code_map(2);

	target_memory_init_image(&memory, image, 1, 1 << 20);
	assert_true(code_map_lookup(map, &memory, at(fake.heap) + METHOD_AT + 0x150, &owner));
	assert_true(owner.start == at(fake.heap) + METHOD_AT);
	assert_int_equal(owner.token, 0x06000005);
	assert_string_equal(owner.module_path, "/app/app.dll");
	/* an image without the heap: no code header before the start */
	const struct target_memory_region cut = {at(&fake), (const uint8_t *)&fake,
						 offsetof(struct fake_runtime, heap)};
	target_memory_init_image(&memory, &cut, 1, 1 << 20);
	assert_false(code_map_lookup(map, &memory, at(fake.heap) + METHOD_AT + 0x150, &owner));
	code_map_free(map);
}

/* .NET 9's descriptor lists no ExecutionManager contract (nor its types):
 * refused, saying so rather than naming a missing field. */
static void test_code_map_without_execution_manager(void **state)
{
	size_t size;
	char *json = (char *)read_whole(descriptor_path, &size);
	char *contract = strstr(json, "\"ExecutionManager\":2");
	uint64_t pointers[24] = {0};
	char error[256];

	(void)state;
	assert_non_null(contract);
	contract[1] = 'e'; /* "executionManager": another contract's name */

	struct contract_descriptor *descriptor =
	    contract_descriptor_parse(json, size, pointers, 24, error, sizeof(error));
	assert_non_null(descriptor);
	assert_null(code_map_new(descriptor, error, sizeof(error)));
	assert_string_equal(error, "the runtime's contract descriptor lists no ExecutionManager "
				   "(a runtime older than .NET 10)");
	contract_descriptor_free(descriptor);
	free(json);
}

/* An assembly stored in a single-file app: an empty Module.Path, its
 * file's name in Module.FileName, read as EXECUTABLE/NAME (the process's
 * executable, here this test's); a name that is a path is not. */
static void test_code_map_stored_module(void **state)
{
	uint16_t name[16] = {0};
	char expected[PATH_MAX + 16];
	struct code_owner owner;
	ssize_t length;

	(void)state;
	skip_without_own_memory();
	build_fake_runtime();
	struct code_map *map = fake_code_map(2);

	fake.path[0] = 0;
	fake.module[26] = at(name); /* FileName */
	for (size_t i = 0; i < sizeof("app.dll") - 1; i++)
		name[i] = (uint16_t) "app.dll"[i];
	length = readlink("/proc/self/exe", expected, PATH_MAX);
	assert_true(length > 0 && length < PATH_MAX);
	strcpy(expected + length, "/app.dll");
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.module_path, expected);

	name[0] = '/';
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.module_path, "");
	fake.module[26] = 0;
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.module_path, "");
	code_map_free(map);
}

/* Each corruption names nothing, in a bounded number of reads. */
static void test_code_map_corrupt(void **state)
{
	struct code_owner owner;
	uint64_t reads;

	(void)state;
	skip_without_own_memory();
	build_fake_runtime();
	struct code_map *map = fake_code_map(2);

	/* a fragment list that loops, around an address it does not hold */
	fake.fragment[0] = at(fake.fragment);
	fake.fragment[2] = at(fake.heap) + 16;
	assert_false(look_up(map, METHOD_AT, &owner, &reads));
	assert_true(reads < 200);
	build_fake_runtime();
	/* a level pointing at unmapped memory */
	fake.levels[2][(at(fake.heap) >> 33) & 0xff] = 0x1000;
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	build_fake_runtime();
	/* a range section of stubs, not a code heap: a stub, of a kind the
	 * descriptor (with no precode patterns) cannot tell, of no method */
	fake.section[2] = 4;
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.stub_kind, "runtime stub");
	assert_true(owner.start == at(fake.heap) + METHOD_AT);
	assert_int_equal(owner.token, 0);
	assert_true(owner.method_desc == 0);
	build_fake_runtime();
	/* a stub's kind before the code, not a header: a dynamic helper (3) */
	memcpy(fake.heap + METHOD_AT - 8, &(uint64_t){3}, 8);
	assert_true(look_up(map, METHOD_AT + 0x10, &owner, NULL));
	assert_string_equal(owner.stub_kind, "DynamicHelper");
	assert_true(owner.start == at(fake.heap) + METHOD_AT);
	assert_true(owner.method_desc == 0);
	/* a kind the runtime does not use (15, StubCodeBlockLast) */
	memcpy(fake.heap + METHOD_AT - 8, &(uint64_t){15}, 8);
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.stub_kind, "runtime stub");
	build_fake_runtime();
	/* a dynamic method (classification 7) is named by its own name, an
	 * unended or unprintable one names nothing */
	memcpy(method_desc() + 6, &(uint16_t){7}, 2);
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	memcpy(fake.heap + 0x1000, "lambda_method3", sizeof("lambda_method3"));
	memcpy(method_desc() + 32, &(uint64_t){at(fake.heap) + 0x1000}, 8); /* MethodName */
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.dynamic_name, "lambda_method3");
	assert_int_equal(owner.token, 0);
	fake.heap[0x1003] = '\n';
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	memset(fake.heap + 0x1000, 'a', 2048);
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	build_fake_runtime();
	/* a MethodDesc past its chunk's end */
	fake.chunk[2] = 1;
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	build_fake_runtime();
	/* a token of row 0 */
	memset(method_desc(), 0, 2);
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	build_fake_runtime();
	/* no MethodTable */
	fake.chunk[0] = 0;
	assert_false(look_up(map, METHOD_AT, &owner, NULL));
	build_fake_runtime();
	/* the heap's map base above its start */
	fake.heap_node[4] = at(fake.heap) + 0x1000;
	assert_false(look_up(map, METHOD_AT + 0x10, &owner, NULL));
	build_fake_runtime();
	/* a version 2 pointer past the address */
	fake.header_map[3] = 0x3f0 + 9;
	assert_false(look_up(map, 0x380, &owner, NULL));
	build_fake_runtime();
	/* a path with no end within its bound (511 code units) names the
	 * method, not a file */
	memset(fake.heap + 0x1000, 'a', 2048);
	fake.module[25] = at(fake.heap) + 0x1000;
	assert_true(look_up(map, METHOD_AT, &owner, NULL));
	assert_string_equal(owner.module_path, "");
	code_map_free(map);

	/* a spent budget stops the lookup */
	build_fake_runtime();
	map = fake_code_map(2);
	struct target_memory memory;
	target_memory_init(&memory, getpid(), 64, 60);
	assert_false(code_map_lookup(map, &memory, at(fake.heap) + METHOD_AT, &owner));
	assert_string_equal(memory.stopped_by, "the byte budget");
	code_map_free(map);
}

static void test_process_without_runtime(void **state)
{
	struct target_memory memory;
	struct runtime_descriptor runtime;
	char error[256];

	(void)state;
	target_memory_init(&memory, getpid(), 1 << 22, 60);
	assert_false(runtime_descriptor_find(getpid(), &memory, &runtime, error, sizeof(error)));
	assert_non_null(strstr(error, "maps no libcoreclr.so"));
	assert_int_equal(memory.reads, 0);
}

/* x64's precodes as the machine descriptor gives their bytes */
static const uint8_t FIXUP[24] = {0xff, 0x25, 0xfa, 0x3f, 0,	0,    0x4c, 0x8b, 0x15, 0xfb,
				  0x3f, 0,    0,    0xff, 0x25, 0xfd, 0x3f, 0,	  0};
static const uint8_t STUB[24] = {0x4c, 0x8b, 0x15, 0xf9, 0x3f, 0, 0, 0xff, 0x25, 0xfb, 0x3f, 0, 0};

static void build_fake_precodes(void)
{
	memset(fake_machine, 0, sizeof(fake_machine));
	memcpy(fake_machine, &(uint32_t){4096}, 4); /* StubCodePageSize */
	fake_machine[5] = 5;			    /* PInvokeImportPrecodeType */
	fake_machine[8] = 24;			    /* FixupStubPrecodeSize */
	memcpy(fake_machine + 9, FIXUP, 24);
	memset(fake_machine + 33 + 19, 1, 5); /* FixupIgnoredBytes: the padding */
	fake_machine[57] = 24;		      /* StubPrecodeSize */
	fake_machine[58] = 3;		      /* StubPrecodeType */
	memcpy(fake_machine + 59, STUB, 24);
	memset(fake_machine + 83 + 13, 1, 11);
	fake_machine[107] = 8; /* ThisPointerRetBufPrecodeType */
	fake_machine[108] = 7; /* UMEntryPrecodeType */
	fake.section[2] = 4;   /* Flags: a range list */
	/* a FixupPrecode at 0x48 leading to the method, a StubPrecode at 0x60 */
	memcpy(fake.heap + 0x48, FIXUP, 24);
	memcpy(fake.heap + 0x48 + 4096 + 8, &(uint64_t){at(method_desc())}, 8);
	memcpy(fake.heap + 0x60, STUB, 24);
	memcpy(fake.heap + 0x60 + 4096, &(uint64_t){at(method_desc())}, 8); /* SecretParam */
	fake.heap[0x60 + 4096 + 16] = 3;				    /* Type */
}

/* Precodes are named by their kind and the method they lead to, from the
 * machine descriptor's patterns; what matches none is a runtime stub. */
static void test_code_map_names_precodes(void **state)
{
	struct code_owner owner;
	uint64_t reads;

	(void)state;
	skip_without_own_memory();
	build_fake_runtime();
	build_fake_precodes();
	struct code_map *map = fake_code_map(2);

	/* the first entry, the second (FixupCodeOffset 6) and its last byte */
	for (uint64_t offset = 0x48; offset < 0x60; offset += 9) {
		assert_true(look_up(map, offset, &owner, &reads));
		assert_string_equal(owner.stub_kind, "FixupPrecode");
		assert_true(owner.start == at(fake.heap) + 0x48);
		assert_int_equal(owner.token, 0x06000005);
		assert_string_equal(owner.module_path, "/app/app.dll");
		assert_true(reads < 100);
	}
	assert_true(look_up(map, 0x60 + 23, &owner, NULL));
	assert_string_equal(owner.stub_kind, "StubPrecode");
	assert_true(owner.start == at(fake.heap) + 0x60);
	assert_int_equal(owner.token, 0x06000005);
	/* a StubPrecode of another type: its parameter is no MethodDesc */
	fake.heap[0x60 + 4096 + 16] = 7;
	assert_true(look_up(map, 0x60, &owner, NULL));
	assert_string_equal(owner.stub_kind, "UMEntryThunk");
	assert_int_equal(owner.token, 0);
	/* type 0: not a precode */
	fake.heap[0x60 + 4096 + 16] = 0;
	assert_true(look_up(map, 0x60, &owner, NULL));
	assert_string_equal(owner.stub_kind, "runtime stub");
	/* no pattern at or before the address */
	assert_true(look_up(map, 0x10, &owner, NULL));
	assert_string_equal(owner.stub_kind, "runtime stub");
	assert_true(owner.start == at(fake.heap) + 0x10);
	/* a FixupPrecode's MethodDesc that is none: the precode, no method */
	memcpy(fake.heap + 0x48 + 4096 + 8, &(uint64_t){0x1000}, 8);
	assert_true(look_up(map, 0x48, &owner, NULL));
	assert_string_equal(owner.stub_kind, "FixupPrecode");
	assert_int_equal(owner.token, 0);
	assert_true(owner.method_desc == 0);
	/* a machine descriptor of an impossible page size: patterns unused */
	memcpy(fake_machine, &(uint32_t){12345}, 4);
	assert_true(look_up(map, 0x48, &owner, NULL));
	assert_string_equal(owner.stub_kind, "runtime stub");
	code_map_free(map);
	memset(fake_machine, 0, sizeof(fake_machine));
}

/* Generic types as .NET 10.0.12 lays out their MethodTables (MTFlags at 0,
 * MTFlags2 at 8, Module at 24, PerInstInfo at 48) and dictionaries (the
 * GenericsDictInfo's NumDicts at 4 and NumTypeArgs at 6, in the pointer
 * before them). */
struct fake_type {
	uint64_t method_table[8];
	uint64_t dictionary_info, dictionaries[2]; /* PerInstInfo: &dictionaries */
	uint64_t arguments[3];
};

enum {
	ROW_CANON = 1,
	ROW_INT32,
	ROW_DICTIONARY,
	ROW_VALUE_TUPLE,
	GENERIC_INSTANTIATION = 0x10,
	SHARED_INSTANTIATION = 0x20,
	TYPICAL_INSTANTIATION = 0x30,
};
static const char *const TYPE_NAMES[] = {
    [ROW_CANON] = "System.__Canon",
    [ROW_INT32] = "System.Int32",
    [ROW_DICTIONARY] = "System.Collections.Generic.Dictionary`2",
    [ROW_VALUE_TUPLE] = "System.ValueTuple`2",
};
static uint64_t fake_module[4]; /* CoreLib's: the namer's one module */
static struct fake_type canon, int32, dictionary, value_tuple, int32_array;

/* A type of TypeDef `row` with `flags` and, when generic, the arguments
 * `first` and `second` in its own dictionary, the second of two. */
static void fake_type(struct fake_type *type, uint32_t row, uint32_t flags,
		      const struct fake_type *first, const struct fake_type *second)
{
	memset(type, 0, sizeof(*type));
	memcpy(type->method_table, &flags, 4);
	memcpy((uint8_t *)type->method_table + 8, &(uint32_t){row << 8}, 4);
	type->method_table[3] = at(fake_module);
	type->method_table[6] = at(type->dictionaries);
	memcpy((uint8_t *)&type->dictionary_info + 4, &(uint16_t){2}, 2);
	memcpy((uint8_t *)&type->dictionary_info + 6, &(uint16_t){first && second ? 2 : 1}, 2);
	type->dictionaries[0] = 0x1000; /* a base type's: not read */
	type->dictionaries[1] = at(type->arguments);
	type->arguments[0] = first ? at(first->method_table) : 0;
	type->arguments[1] = second ? at(second->method_table) : 0;
}

/* Dictionary<__Canon,ValueTuple<int,int[]>>: the code that
 * Dictionary<string,(int,int[])> runs. */
static void build_fake_types(void)
{
	fake_type(&canon, ROW_CANON, 0, NULL, NULL);
	fake_type(&int32, ROW_INT32, 0, NULL, NULL);
	/* an int[]: a component size of 4, its element type its PerInstInfo */
	fake_type(&int32_array, 0, 0x80000000u | 0x00080000u | 0x00020000u | 4, NULL, NULL);
	int32_array.method_table[6] = at(int32.method_table);
	fake_type(&value_tuple, ROW_VALUE_TUPLE, GENERIC_INSTANTIATION, &int32, &int32_array);
	fake_type(&dictionary, ROW_DICTIONARY, SHARED_INSTANTIATION, &canon, &value_tuple);
}

/* generic_arguments_namer(): the fake module's TypeDefs, counted. */
static int names_asked;
static bool name_fake_type(void *context, struct target_memory *memory, uint64_t module,
			   uint32_t row, char *name, size_t size)
{
	(void)context;
	(void)memory;
	names_asked++;
	if (module != at(fake_module) || row >= sizeof(TYPE_NAMES) / sizeof(*TYPE_NAMES) ||
	    !TYPE_NAMES[row])
		return false;
	snprintf(name, size, "%s", TYPE_NAMES[row]);
	return true;
}

static struct generic_arguments *fake_generic_arguments(void)
{
	size_t size;
	char *json = (char *)read_whole(descriptor_path, &size);
	uint64_t pointers[24] = {0};
	char error[256];
	struct contract_descriptor *descriptor =
	    contract_descriptor_parse(json, size, pointers, 24, error, sizeof(error));

	assert_non_null(descriptor);

	struct generic_arguments *arguments =
	    generic_arguments_new(descriptor, error, sizeof(error));
	assert_non_null(arguments);
	contract_descriptor_free(descriptor);
	free(json);
	return arguments;
}

/* The arguments of the type whose MethodTable is at `method_table`, into
 * `text`; the reads made in `reads`. */
static bool walk_arguments(const struct generic_arguments *arguments, uint64_t method_table,
			   char *text, size_t size, uint32_t *row, uint64_t *reads)
{
	struct target_memory memory;

	target_memory_init(&memory, getpid(), 1 << 20, 60);
	bool found = generic_arguments_write(arguments, &memory, method_table, name_fake_type, NULL,
					     row, text, size);
	if (reads)
		*reads = memory.reads;
	return found;
}

/* Whether the fake Dictionary's arguments are named. */
static bool dictionary_is_named(const struct generic_arguments *arguments)
{
	char text[4096];
	uint32_t row;

	return walk_arguments(arguments, at(dictionary.method_table), text, sizeof(text), &row,
			      NULL);
}

static void test_generic_arguments(void **state)
{
	struct generic_arguments *arguments = fake_generic_arguments();
	char text[512];
	uint32_t row;

	(void)state;
	skip_without_own_memory();
	build_fake_types();
	assert_true(
	    walk_arguments(arguments, at(dictionary.method_table), text, sizeof(text), &row, NULL));
	assert_string_equal(text,
			    "[System.__Canon,System.ValueTuple`2[System.Int32,System.Int32[]]]");
	assert_int_equal(row, ROW_DICTIONARY);
	/* a type of no arguments: none */
	assert_true(
	    walk_arguments(arguments, at(int32.method_table), text, sizeof(text), &row, NULL));
	assert_string_equal(text, "");
	assert_int_equal(row, ROW_INT32);
	/* one character short of the text */
	assert_false(walk_arguments(arguments, at(dictionary.method_table), text,
				    strlen("[System.__Canon,System.ValueTuple`2[System.Int32,"
					   "System.Int32[]]]"),
				    &row, NULL));
	generic_arguments_free(arguments);
}

/* Each corruption names nothing (the caller keeps the definition's name),
 * in a bounded number of reads. */
static void test_generic_arguments_corrupt(void **state)
{
	struct generic_arguments *arguments = fake_generic_arguments();
	struct fake_type nested[12];
	char text[4096];
	uint32_t row;
	uint64_t reads;

	(void)state;
	skip_without_own_memory();
	/* a type among its own arguments' arguments: a cycle, ended by the depth */
	build_fake_types();
	value_tuple.arguments[1] = at(dictionary.method_table);
	names_asked = 0;
	assert_false(walk_arguments(arguments, at(dictionary.method_table), text, sizeof(text),
				    &row, &reads));
	assert_true(reads < 100 && names_asked < 30);
	/* a TypeDesc (a type variable, a pointer) among the arguments */
	build_fake_types();
	dictionary.arguments[0] |= 2;
	assert_false(dictionary_is_named(arguments));
	/* an argument at no MethodTable */
	build_fake_types();
	dictionary.arguments[1] = 0x1000;
	assert_false(dictionary_is_named(arguments));
	/* the dictionaries' and arguments' counts out of bounds */
	build_fake_types();
	memcpy((uint8_t *)&dictionary.dictionary_info + 6, &(uint16_t){0}, 2);
	assert_false(dictionary_is_named(arguments));
	memcpy((uint8_t *)&dictionary.dictionary_info + 6, &(uint16_t){40000}, 2);
	assert_false(dictionary_is_named(arguments));
	build_fake_types();
	memcpy((uint8_t *)&dictionary.dictionary_info + 4, &(uint16_t){0}, 2);
	assert_false(dictionary_is_named(arguments));
	/* the type's own dictionary unmapped */
	build_fake_types();
	dictionary.dictionaries[1] = 0x1000;
	assert_false(dictionary_is_named(arguments));
	/* a typical instantiation (Dictionary<TKey,TValue> itself) */
	build_fake_types();
	memcpy(dictionary.method_table, &(uint32_t){TYPICAL_INSTANTIATION}, 4);
	assert_false(dictionary_is_named(arguments));
	/* an argument its module does not name (row 0, a row it lacks) */
	build_fake_types();
	memcpy((uint8_t *)canon.method_table + 8, &(uint32_t){0}, 4);
	assert_false(dictionary_is_named(arguments));
	memcpy((uint8_t *)canon.method_table + 8, &(uint32_t){99 << 8}, 4);
	assert_false(dictionary_is_named(arguments));
	/* a multi-dimensional array (int[,]) */
	build_fake_types();
	memcpy(int32_array.method_table, &(uint32_t){0x80000000u | 0x00080000u | 4}, 4);
	assert_false(dictionary_is_named(arguments));
	/* ValueTuple<ValueTuple<...>> twelve deep: past the depth bound */
	build_fake_types();
	for (int i = 0; i < 12; i++)
		fake_type(&nested[i], ROW_VALUE_TUPLE, GENERIC_INSTANTIATION,
			  i ? &nested[i - 1] : &int32, &int32);
	assert_false(walk_arguments(arguments, at(nested[11].method_table), text, sizeof(text),
				    &row, &reads));
	assert_true(reads < 100);
	/* seven levels below the type are named */
	assert_true(
	    walk_arguments(arguments, at(nested[6].method_table), text, sizeof(text), &row, NULL));
	assert_non_null(strstr(text, "[System.ValueTuple`2[System.ValueTuple`2[System.Int32,"));
	/* a MethodTable at no address, or a misaligned one */
	assert_false(walk_arguments(arguments, 0x1000, text, sizeof(text), &row, NULL));
	assert_false(walk_arguments(arguments, at(dictionary.method_table) + 1, text, sizeof(text),
				    &row, NULL));
	generic_arguments_free(arguments);
}

/* A machine descriptor's offset whose sum with the pattern's bytes wraps
 * around 32 bits (4294967295 + 32 is 31): the patterns are not used, and
 * nothing is read 4 GiB past the machine descriptor's bytes. */
static void test_precode_offset_wrapping(void **state)
{
	struct code_owner owner;

	(void)state;
	skip_without_own_memory();
	build_fake_runtime();
	build_fake_precodes();
	struct code_map *map =
	    fake_code_map_edited("\"StubPrecodeSize\":57", "\"StubPrecodeSize\":4294967295");

	assert_true(look_up(map, 0x48, &owner, NULL));
	assert_string_equal(owner.stub_kind, "runtime stub");
	code_map_free(map);
	memset(fake_machine, 0, sizeof(fake_machine));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_descriptor),
	    cmocka_unit_test(test_hostile_descriptors),
	    cmocka_unit_test(test_reads_are_checked_and_bounded),
	    cmocka_unit_test(test_image_reads),
	    cmocka_unit_test(test_descriptor_in_memory),
	    cmocka_unit_test(test_process_without_runtime),
	    cmocka_unit_test(test_code_map_finds_the_method),
	    cmocka_unit_test(test_code_map_reads_an_image),
	    cmocka_unit_test(test_code_map_corrupt),
	    cmocka_unit_test(test_code_map_stored_module),
	    cmocka_unit_test(test_code_map_without_execution_manager),
	    cmocka_unit_test(test_code_map_names_precodes),
	    cmocka_unit_test(test_precode_offset_wrapping),
	    cmocka_unit_test(test_generic_arguments),
	    cmocka_unit_test(test_generic_arguments_corrupt),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DESCRIPTOR_JSON\n", argv[0]);
		return 2;
	}
	descriptor_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
