/* The route from the .NET runtime's memory: the bounded reader of a
 * process's memory (on this process's own), the contract descriptor's JSON
 * as .NET 10.0.12 wrote it (tests/data, argv[1]) and hostile variants of
 * it, and the descriptor struct read from memory (fakes in this process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "contract_descriptor.h"
#include "runtime_descriptor.h"
#include "target_memory.h"
#include "whole_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void test_reads_are_checked_and_bounded(void **state)
{
	static const char bytes[] = "sixteen bytes...";
	char copy[sizeof(bytes)];
	struct target_memory memory;
	uint64_t value;

	(void)state;
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_descriptor),
	    cmocka_unit_test(test_hostile_descriptors),
	    cmocka_unit_test(test_reads_are_checked_and_bounded),
	    cmocka_unit_test(test_descriptor_in_memory),
	    cmocka_unit_test(test_process_without_runtime),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DESCRIPTOR_JSON\n", argv[0]);
		return 2;
	}
	descriptor_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
