#include "code_map.h"

#include "runtime_stubs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	MAP_LEVELS = 5,
	BITS_PER_LEVEL = 8,
	/* the lowest address bit the levels index: bit 17 (128 KiB chunks) */
	CHUNK_BITS = 57 - MAP_LEVELS * BITS_PER_LEVEL,
	MAX_FRAGMENTS = 64, /* followed in one chunk's list */
	/* the nibble map: 32-byte buckets, eight 4-bit nibbles in a 32-bit
	 * unit (256 bytes of code), the first bucket in the top nibble */
	BUCKET_BITS = 5,
	NIBBLES_PER_UNIT = 8,
	/* version 1 scans back unit by unit to the method's start: a method
	 * of up to 1 MiB of code, read 256 units at a time */
	MAX_UNITS_BACK = 4096,
	UNITS_PER_READ = 256,
	/* RangeSection flags */
	RANGE_SECTION_CODEHEAP = 0x2,
	RANGE_SECTION_RANGELIST = 0x4,
	METHOD_DEF_TABLE = 0x06,
	/* MethodDesc flags: the low three bits are its classification; 7, a
	 * dynamic method (LCG, IL stubs), has no metadata behind it but a name
	 * of its own */
	CLASSIFICATION_MASK = 0x7,
	CLASSIFICATION_DYNAMIC = 7,
	MAX_PATH_UNITS = 511,
};

/* The offsets and globals the lookups use, from the descriptor once. */
struct code_map {
	uint32_t version;
	uint64_t range_map, method_desc_alignment, stub_code_block_last;
	uint32_t token_remainder_bits;
	uint32_t top_level_data;
	uint32_t fragment_begin, fragment_end, fragment_section, fragment_next;
	uint32_t section_flags, section_heap_list;
	uint32_t heap_start, heap_end, heap_map_base, heap_header_map;
	uint32_t header_method_desc;
	uint32_t desc_chunk_index, desc_flags, desc_token_remainder, dynamic_method_name;
	uint32_t chunk_size, chunk_units, chunk_method_table, chunk_token_range;
	uint32_t table_module, module_path, module_file_name;
	bool has_file_name;	     /* Module.FileName, .NET 10 */
	struct runtime_stubs *stubs; /* NULL: precodes not recognized */
};

struct code_map *code_map_new(const struct contract_descriptor *descriptor, char *error,
			      size_t error_size)
{
	struct code_map *map = calloc(1, sizeof(*map));

	if (!map) {
		runtime_memory_error(error, error_size, "out of memory");
		return NULL;
	}

	const struct {
		const char *type, *field;
		uint32_t *offset;
	} fields[] = {
	    {"RangeSectionMap", "TopLevelData", &map->top_level_data},
	    {"RangeSectionFragment", "RangeBegin", &map->fragment_begin},
	    {"RangeSectionFragment", "RangeEndOpen", &map->fragment_end},
	    {"RangeSectionFragment", "RangeSection", &map->fragment_section},
	    {"RangeSectionFragment", "Next", &map->fragment_next},
	    {"RangeSection", "Flags", &map->section_flags},
	    {"RangeSection", "HeapList", &map->section_heap_list},
	    {"CodeHeapListNode", "StartAddress", &map->heap_start},
	    {"CodeHeapListNode", "EndAddress", &map->heap_end},
	    {"CodeHeapListNode", "MapBase", &map->heap_map_base},
	    {"CodeHeapListNode", "HeaderMap", &map->heap_header_map},
	    {"RealCodeHeader", "MethodDesc", &map->header_method_desc},
	    {"MethodDesc", "ChunkIndex", &map->desc_chunk_index},
	    {"MethodDesc", "Flags", &map->desc_flags},
	    {"DynamicMethodDesc", "MethodName", &map->dynamic_method_name},
	    {"MethodDesc", "Flags3AndTokenRemainder", &map->desc_token_remainder},
	    {"MethodDescChunk", "MethodTable", &map->chunk_method_table},
	    {"MethodDescChunk", "FlagsAndTokenRange", &map->chunk_token_range},
	    {"MethodDescChunk", "Size", &map->chunk_units},
	    {"MethodTable", "Module", &map->table_module},
	    {"Module", "Path", &map->module_path},
	};
	const struct {
		const char *name;
		uint64_t *value;
	} globals[] = {
	    {"ExecutionManagerCodeRangeMapAddress", &map->range_map},
	    {"MethodDescAlignment", &map->method_desc_alignment},
	    {"StubCodeBlockLast", &map->stub_code_block_last},
	};
	uint64_t remainder_bits;

	/* .NET 9's descriptor lists no ExecutionManager (nor the types below):
	 * said first, rather than its first missing field */
	if (!contract_descriptor_contract(descriptor, "ExecutionManager", &map->version)) {
		runtime_memory_error(error, error_size,
				     "the runtime's contract descriptor lists no ExecutionManager "
				     "(a runtime older than .NET 10)");
		goto refused;
	}
	if (map->version != 1 && map->version != 2) {
		runtime_memory_error(
		    error, error_size,
		    "the runtime's ExecutionManager contract is not version 1 or 2");
		goto refused;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
		if (!contract_descriptor_field(descriptor, fields[i].type, fields[i].field,
					       fields[i].offset)) {
			runtime_memory_error(error, error_size, "the runtime describes no %s.%s",
					     fields[i].type, fields[i].field);
			goto refused;
		}
	for (size_t i = 0; i < sizeof(globals) / sizeof(*globals); i++)
		if (!contract_descriptor_global(descriptor, globals[i].name, globals[i].value)) {
			runtime_memory_error(error, error_size, "the runtime has no global %s",
					     globals[i].name);
			goto refused;
		}
	if (!contract_descriptor_type_size(descriptor, "MethodDescChunk", &map->chunk_size) ||
	    !contract_descriptor_global(descriptor, "MethodDescTokenRemainderBitCount",
					&remainder_bits) ||
	    remainder_bits == 0 || remainder_bits >= 24 || map->method_desc_alignment == 0 ||
	    map->method_desc_alignment > 64) {
		runtime_memory_error(
		    error, error_size,
		    "the runtime describes no usable MethodDescChunk size, token bits or "
		    "MethodDesc alignment");
		goto refused;
	}
	map->token_remainder_bits = (uint32_t)remainder_bits;
	map->has_file_name =
	    contract_descriptor_field(descriptor, "Module", "FileName", &map->module_file_name);
	map->stubs = runtime_stubs_new(descriptor);
	return map;
refused:
	free(map);
	return NULL;
}

void code_map_free(struct code_map *map)
{
	if (map)
		runtime_stubs_free(map->stubs);
	free(map);
}

static bool read_pointer(struct target_memory *memory, uint64_t address, uint64_t *value)
{
	return target_memory_read_u64(memory, address, value);
}

/* The range section of `address`, through the map's levels and the chunk's
 * fragments. */
static bool find_range_section(const struct code_map *map, struct target_memory *memory,
			       uint64_t address, uint64_t *section)
{
	uint64_t level_map = map->range_map + map->top_level_data, entry = 0;

	for (int level = MAP_LEVELS; level >= 1; level--) {
		uint64_t index = (address >> (CHUNK_BITS + (level - 1) * BITS_PER_LEVEL)) & 0xff;

		/* the low bit of an entry marks collectible code */
		if (!read_pointer(memory, level_map + index * 8, &entry) || (entry & ~1ull) == 0)
			return false;
		level_map = entry & ~1ull;
	}

	uint64_t fragment = entry & ~1ull;

	for (int step = 0; fragment && step < MAX_FRAGMENTS; step++) {
		uint64_t begin, end;

		if (!read_pointer(memory, fragment + map->fragment_begin, &begin) ||
		    !read_pointer(memory, fragment + map->fragment_end, &end))
			return false;
		if (begin <= address && address < end)
			return read_pointer(memory, fragment + map->fragment_section, section) &&
			       *section != 0;
		if (!read_pointer(memory, fragment + map->fragment_next, &fragment))
			return false;
		fragment &= ~1ull;
	}
	return false;
}

/* Version 2 writes, into each unit a method's code covers whole, the
 * method's start relative to the map base: its top 28 bits, and the next
 * two (the start is 4-byte aligned) as the low nibble's values 9..12. */
static bool unit_is_pointer(uint32_t unit)
{
	return (unit & 0xf) > 8;
}

static uint64_t unit_pointer(uint64_t map_base, uint32_t unit)
{
	return map_base + (unit & ~0xfu) + (((unit & 0xf) - 9) << 2);
}

/* The start of the last method starting at or before `bucket`'s nibble
 * `at_most` (1..8: offset / 4 + 1 in the bucket) in `unit`, whose last
 * bucket is `last_bucket`. */
static bool unit_start(uint32_t unit, uint64_t last_bucket, uint64_t bucket, uint32_t at_most,
		       uint64_t map_base, uint64_t *start)
{
	for (uint64_t at = bucket;; at--) {
		uint32_t nibble = (unit >> (4 * (last_bucket - at))) & 0xf;

		if (nibble && (at < bucket || nibble <= at_most)) {
			*start = map_base + (at << BUCKET_BITS) + ((nibble - 1) << 2);
			return true;
		}
		if (at == last_bucket - (NIBBLES_PER_UNIT - 1))
			return false;
	}
}

/* The start of the method whose code holds `address`, from the nibble map
 * of a code heap based at `map_base`. */
static bool find_method_start(const struct code_map *map, struct target_memory *memory,
			      uint64_t map_base, uint64_t header_map, uint64_t address,
			      uint64_t *start)
{
	uint64_t relative = address - map_base;
	uint64_t bucket = relative >> BUCKET_BITS;
	uint64_t unit_index = bucket / NIBBLES_PER_UNIT;
	uint32_t at_most = (uint32_t)((relative & ((1u << BUCKET_BITS) - 1)) >> 2) + 1;
	uint32_t unit;

	if (!target_memory_read_u32(memory, header_map + unit_index * 4, &unit))
		return false;
	if (map->version == 2 && unit_is_pointer(unit)) {
		*start = unit_pointer(map_base, unit);
		return true;
	}
	if (unit_start(unit, unit_index * NIBBLES_PER_UNIT + NIBBLES_PER_UNIT - 1, bucket, at_most,
		       map_base, start))
		return true;

	/* earlier units: version 2 needs one (a method covering a unit whole
	 * left its pointer there), version 1 scans back */
	uint64_t limit = map->version == 2 ? 1 : MAX_UNITS_BACK;
	uint32_t units[UNITS_PER_READ];

	for (uint64_t back = 0; back < limit && unit_index > 0;) {
		uint64_t count = unit_index < UNITS_PER_READ ? unit_index : UNITS_PER_READ;

		count = count < limit - back ? count : limit - back;
		if (!target_memory_read(memory, header_map + (unit_index - count) * 4, units,
					count * 4))
			return false;
		for (uint64_t i = count; i-- > 0;) {
			uint64_t index = unit_index - count + i;

			if (units[i] == 0) {
				if (map->version == 2)
					return false;
				continue;
			}
			if (map->version == 2 && unit_is_pointer(units[i])) {
				*start = unit_pointer(map_base, units[i]);
				return true;
			}
			uint64_t last = index * NIBBLES_PER_UNIT + NIBBLES_PER_UNIT - 1;
			return unit_start(units[i], last, last, NIBBLES_PER_UNIT, map_base, start);
		}
		unit_index -= count;
		back += count;
	}
	return false;
}

/* A UTF-16 string of the runtime's at `address`, converted to UTF-8 (code
 * units outside ASCII become '?': paths here are the loader's); "" when it
 * does not end within its bound. */
static void read_utf16(struct target_memory *memory, uint64_t address, char *text, size_t size)
{
	uint16_t units[MAX_PATH_UNITS + 1];
	size_t length = 0;

	text[0] = '\0';
	/* 64 code units at a time: a short path may end just before an
	 * unmapped page */
	for (size_t read = 0; read < MAX_PATH_UNITS; read += 64) {
		size_t count = MAX_PATH_UNITS - read < 64 ? MAX_PATH_UNITS - read : 64;

		if (!target_memory_read(memory, address + read * 2, units + read, count * 2))
			return;
		for (size_t i = read; i < read + count; i++) {
			if (units[i] == 0) {
				text[length] = '\0';
				return;
			}
			if (length + 1 < size)
				text[length++] = units[i] < 0x80 ? (char)units[i] : '?';
		}
	}
	text[0] = '\0'; /* no end within the bound: not a path */
}

/* An assembly stored in a single-file app has no path, only its file's
 * name: "EXECUTABLE/NAME", as managed_images.h reads it from the
 * executable (the process's, as its own root sees it). */
static void stored_module_path(const struct code_map *map, struct target_memory *memory,
			       uint64_t module, char *path, size_t size)
{
	char name[256], link[64];
	uint64_t address;
	ssize_t length;

	if (!map->has_file_name ||
	    !read_pointer(memory, module + map->module_file_name, &address) || !address)
		return;
	read_utf16(memory, address, name, sizeof(name));
	if (!name[0] || strchr(name, '/'))
		return;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)memory->pid);
	length = readlink(link, path, size - 1);
	if (length <= 0 || path[0] != '/' ||
	    (size_t)snprintf(path + length, size - (size_t)length, "/%s", name) >=
		size - (size_t)length)
		path[0] = '\0';
}

/* The module's path (Module.Path), or where a single-file app stores it. */
void code_map_module_path(const struct code_map *map, struct target_memory *memory, uint64_t module,
			  char *path, size_t size)
{
	uint64_t address;

	path[0] = '\0';
	if (read_pointer(memory, module + map->module_path, &address) && address)
		read_utf16(memory, address, path, size);
	if (!path[0])
		stored_module_path(map, memory, module, path, size);
}

/* A dynamic method's own name (a UTF-8 string of the runtime's): printable
 * ASCII, ended within its bound, or the method is not named. */
static bool read_dynamic_name(const struct code_map *map, struct target_memory *memory,
			      struct code_owner *owner)
{
	uint64_t address;
	char *name = owner->dynamic_name;
	size_t size = sizeof(owner->dynamic_name);

	if (!read_pointer(memory, owner->method_desc + map->dynamic_method_name, &address) ||
	    !address)
		return false;
	/* 64 bytes at a time: a short name may end just before an unmapped
	 * page */
	for (size_t read = 0; read < size; read += 64) {
		if (!target_memory_read(memory, address + read, name + read, 64))
			goto refused;
		for (size_t i = read; i < read + 64; i++) {
			if (name[i] == '\0' && i > 0)
				return true;
			if (name[i] < 0x20 || name[i] > 0x7e)
				goto refused;
		}
	}
refused:
	name[0] = '\0';
	return false;
}

/* The method of `owner->method_desc`: its chunk, MethodTable, module and
 * token, or its own name for a dynamic method. */
static bool read_method(const struct code_map *map, struct target_memory *memory,
			struct code_owner *owner)
{
	uint64_t chunk, method_table;
	uint8_t chunk_index, chunk_last_unit;
	uint16_t flags_of_desc, remainder, range;

	if (!owner->method_desc ||
	    !target_memory_read(memory, owner->method_desc + map->desc_chunk_index, &chunk_index,
				1) ||
	    !target_memory_read(memory, owner->method_desc + map->desc_flags, &flags_of_desc, 2) ||
	    !target_memory_read(memory, owner->method_desc + map->desc_token_remainder, &remainder,
				2))
		return false;
	chunk = owner->method_desc - chunk_index * map->method_desc_alignment - map->chunk_size;
	/* the chunk must hold the MethodDesc: its Size is its last unit */
	if (chunk > owner->method_desc ||
	    !target_memory_read(memory, chunk + map->chunk_units, &chunk_last_unit, 1) ||
	    chunk_index > chunk_last_unit ||
	    !read_pointer(memory, chunk + map->chunk_method_table, &method_table) ||
	    !method_table ||
	    !target_memory_read(memory, chunk + map->chunk_token_range, &range, 2) ||
	    !read_pointer(memory, method_table + map->table_module, &owner->module) ||
	    !owner->module)
		return false;

	owner->method_table = method_table;
	code_map_module_path(map, memory, owner->module, owner->module_path,
			     sizeof(owner->module_path));
	if ((flags_of_desc & CLASSIFICATION_MASK) == CLASSIFICATION_DYNAMIC)
		return read_dynamic_name(map, memory, owner);

	uint32_t remainder_mask = (1u << map->token_remainder_bits) - 1;
	uint32_t range_mask = 0xffffffu >> map->token_remainder_bits;
	uint32_t rid =
	    ((range & range_mask) << map->token_remainder_bits) | (remainder & remainder_mask);

	if (rid == 0)
		return false;
	owner->token = (uint32_t)METHOD_DEF_TABLE << 24 | rid;
	return true;
}

/* A code heap stub's kind by its header, the runtime's StubCodeBlockKind,
 * named as its perf map names stubs. */
static const char *stub_block_kind(uint64_t header)
{
	static const char *const kinds[] = {
	    [1] = "JumpStub",	    [3] = "DynamicHelper",    [4] = "StubPrecode",
	    [5] = "FixupPrecode",   [6] = "VSD_DispatchStub", [7] = "VSD_ResolveStub",
	    [8] = "VSD_LookupStub", [9] = "VSD_VTableStub",   [10] = "CallCountingStub",
	};

	return header < sizeof(kinds) / sizeof(*kinds) && kinds[header] ? kinds[header]
									: "runtime stub";
}

/* A stub of `kind` at `address` whose start is unknown: the address alone. */
static bool name_stub(struct code_owner *owner, uint64_t address, const char *kind)
{
	memset(owner, 0, sizeof(*owner));
	owner->start = address;
	snprintf(owner->stub_kind, sizeof(owner->stub_kind), "%s", kind);
	return true;
}

static bool lookup(const struct code_map *map, struct target_memory *memory, uint64_t address,
		   bool unlisted_too, struct code_owner *owner);

/* Runtime code in no range section (runtime_stubs_find_unlisted()), with
 * the method a call counting stub leads to, when its code is one's (looked
 * up in the range sections alone: a stub leading to a stub names none). */
static bool find_unlisted(const struct code_map *map, struct target_memory *memory,
			  uint64_t address, struct code_owner *owner)
{
	struct runtime_stub stub;
	struct code_owner method;

	if (!runtime_stubs_find_unlisted(map->stubs, memory, address, &stub))
		return false;
	/* its target: the method's code, or a precode leading to it */
	if (stub.target && lookup(map, memory, stub.target, false, &method) &&
	    (method.stub_kind[0] ? method.token || method.dynamic_name[0]
				 : method.start == stub.target))
		*owner = method;
	snprintf(owner->stub_kind, sizeof(owner->stub_kind), "%s", stub.kind);
	owner->start = stub.start;
	return true;
}

static bool lookup(const struct code_map *map, struct target_memory *memory, uint64_t address,
		   bool unlisted_too, struct code_owner *owner)
{
	uint32_t flags;
	uint64_t section, heap, heap_start, heap_end, map_base, header_map;

	memset(owner, 0, sizeof(*owner));
	if (!find_range_section(map, memory, address, &section))
		return unlisted_too && find_unlisted(map, memory, address, owner);
	if (!target_memory_read_u32(memory, section + map->section_flags, &flags))
		return false;
	/* the runtime's stubs: precodes, virtual call stubs, call counting */
	if (flags & RANGE_SECTION_RANGELIST) {
		struct runtime_stub stub;

		runtime_stubs_find(map->stubs, memory, address, &stub);
		name_stub(owner, stub.start, stub.kind);
		owner->method_desc = stub.method_desc;
		/* the method it leads to, when the memory agrees it is one */
		if (stub.method_desc && !read_method(map, memory, owner))
			name_stub(owner, stub.start, stub.kind);
		return true;
	}
	if (!(flags & RANGE_SECTION_CODEHEAP) ||
	    !read_pointer(memory, section + map->section_heap_list, &heap) || !heap ||
	    !read_pointer(memory, heap + map->heap_start, &heap_start) ||
	    !read_pointer(memory, heap + map->heap_end, &heap_end) ||
	    !read_pointer(memory, heap + map->heap_map_base, &map_base) ||
	    !read_pointer(memory, heap + map->heap_header_map, &header_map) ||
	    address < heap_start || address >= heap_end || map_base > heap_start ||
	    !find_method_start(map, memory, map_base, header_map, address, &owner->start) ||
	    owner->start > address || owner->start < heap_start + 8)
		return false;

	/* the pointer before the code: its header, or a stub's kind (a small
	 * number: jump stubs, dynamic helpers, instantiating stubs) */
	uint64_t header;

	if (!read_pointer(memory, owner->start - 8, &header))
		return false;
	if (header <= map->stub_code_block_last)
		return name_stub(owner, owner->start, stub_block_kind(header));
	return read_pointer(memory, header + map->header_method_desc, &owner->method_desc) &&
	       read_method(map, memory, owner);
}

bool code_map_lookup(const struct code_map *map, struct target_memory *memory, uint64_t address,
		     struct code_owner *owner)
{
	return lookup(map, memory, address, true, owner);
}
