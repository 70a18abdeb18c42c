#include "readytorun.h"
#include "arm64_unwind.h"
#include "little_endian.h"

#include <string.h>

#define READYTORUN_SIGNATURE 0x00525452 /* "RTR" */
#define CLI_HEADER_SIZE	     72
#define MAX_SECTIONS	     256

enum section_type {
	SECTION_RUNTIME_FUNCTIONS = 102,
	SECTION_METHOD_DEF_ENTRY_POINTS = 103,
	SECTION_DEBUG_INFO = 105,
	SECTION_INSTANCE_ENTRY_POINTS = 109,
	SECTION_MANIFEST_METADATA = 112,
	SECTION_COMPONENT_ASSEMBLIES = 115,
	SECTION_OWNER_COMPOSITE_EXECUTABLE = 116,
	SECTION_HOT_COLD_MAP = 120,
};

#define X64_RUNTIME_FUNCTION_SIZE	12 /* begin, end, unwind info */
#define ARM64_RUNTIME_FUNCTION_SIZE	8  /* begin, unwind data */
#define UNWIND_FLAG_EXCEPTION_HANDLER	0x1
#define UNWIND_FLAG_TERMINATION_HANDLER 0x2
#define UNWIND_FLAG_CHAIN_INFO		0x4
#define NATIVE_ARRAY_BLOCK_SIZE		16

/* The machine of an image's code. .NET writes the machine of non-Windows
 * images xor-ed with an OS tag. */
static bool machine_of(uint16_t machine, enum frame_machine *code_machine)
{
	static const uint16_t os_tags[] = {0, 0x7b79 /* Linux */, 0x4644 /* Apple */,
					   0xadc4 /* FreeBSD */, 0x1993 /* NetBSD */};

	for (size_t i = 0; i < sizeof(os_tags) / sizeof(*os_tags); i++) {
		if ((machine ^ os_tags[i]) == PE_MACHINE_AMD64)
			*code_machine = FRAME_MACHINE_X86_64;
		else if ((machine ^ os_tags[i]) == PE_MACHINE_ARM64)
			*code_machine = FRAME_MACHINE_AARCH64;
		else
			continue;
		return true;
	}
	return false;
}

static size_t runtime_function_size(const struct readytorun *r2r)
{
	return r2r->machine == FRAME_MACHINE_AARCH64 ? ARM64_RUNTIME_FUNCTION_SIZE
						     : X64_RUNTIME_FUNCTION_SIZE;
}

/* A view of the table at `rva` (`size` bytes, loaded) inside the section
 * holding it. */
static bool table_at(const struct pe_image *image, uint32_t rva, uint32_t size,
		     struct readytorun_table *table)
{
	if (!pe_image_at_rva(image, rva, size))
		return false;
	for (size_t i = 0; i < image->section_count; i++) {
		const struct pe_section *section = &image->sections[i];
		uint64_t bytes = section->raw_size;

		if (section->virtual_size && section->virtual_size < bytes)
			bytes = section->virtual_size;
		if (section->raw_offset >= image->size)
			continue;
		if (bytes > image->size - section->raw_offset)
			bytes = image->size - section->raw_offset;
		if (rva < section->virtual_address || rva - section->virtual_address >= bytes)
			continue;
		table->section_base = image->data + section->raw_offset - section->virtual_address;
		table->start_rva = rva;
		table->end_rva = rva + size;
		table->section_start_rva = section->virtual_address;
		table->section_end_rva = section->virtual_address + (uint32_t)bytes;
		return true;
	}
	return false;
}

bool readytorun_parse(struct readytorun *r2r, const struct pe_image *image)
{
	const uint8_t *cli, *header;
	uint32_t cli_rva, cli_size, header_rva, header_size, section_count;

	memset(r2r, 0, sizeof(*r2r));
	r2r->image = image;
	if (!machine_of(image->machine, &r2r->machine) ||
	    !pe_image_directory(image, PE_DIRECTORY_CLI_HEADER, &cli_rva, &cli_size) ||
	    !(cli = pe_image_at_rva(image, cli_rva, CLI_HEADER_SIZE)))
		return false;
	header_rva = read_u32(cli + 64); /* ManagedNativeHeader */
	header_size = read_u32(cli + 68);
	if (header_size < 16 || !(header = pe_image_at_rva(image, header_rva, 16)) ||
	    read_u32(header) != READYTORUN_SIGNATURE)
		return false;
	r2r->major_version = read_u16(header + 4);
	r2r->minor_version = read_u16(header + 6);
	r2r->flags = read_u32(header + 8);
	section_count = read_u32(header + 12);
	if (section_count > MAX_SECTIONS ||
	    !(header = pe_image_at_rva(image, header_rva, 16 + section_count * 12)))
		return false;
	for (uint32_t i = 0; i < section_count; i++) {
		const uint8_t *entry = header + 16 + i * 12;
		uint32_t type = read_u32(entry), rva = read_u32(entry + 4),
			 size = read_u32(entry + 8);

		/* Only the sections read here are loaded; one outside the file
		 * is left unread. */
		switch (type) {
		case SECTION_RUNTIME_FUNCTIONS:
			if ((r2r->runtime_functions = pe_image_at_rva(image, rva, size)))
				r2r->runtime_function_count =
				    size / (uint32_t)runtime_function_size(r2r);
			break;
		case SECTION_METHOD_DEF_ENTRY_POINTS:
			table_at(image, rva, size, &r2r->method_def_entry_points);
			break;
		case SECTION_INSTANCE_ENTRY_POINTS:
			table_at(image, rva, size, &r2r->instance_entry_points);
			break;
		case SECTION_DEBUG_INFO: /* loaded when a line is first asked for */
			r2r->debug_info_rva = rva;
			r2r->debug_info_size = size;
			break;
		case SECTION_COMPONENT_ASSEMBLIES:
			if ((r2r->components = pe_image_at_rva(image, rva, size)))
				r2r->component_count = size / 16;
			break;
		case SECTION_MANIFEST_METADATA:
			if ((r2r->manifest_metadata = pe_image_at_rva(image, rva, size)))
				r2r->manifest_metadata_size = size;
			break;
		case SECTION_OWNER_COMPOSITE_EXECUTABLE: {
			const uint8_t *name = pe_image_at_rva(image, rva, size);

			if (name && size < sizeof(r2r->owner_composite)) {
				memcpy(r2r->owner_composite, name, size);
				r2r->owner_composite[size] = '\0';
			}
			break;
		}
		case SECTION_HOT_COLD_MAP:
			if ((r2r->hot_cold_map = pe_image_at_rva(image, rva, size)))
				r2r->hot_cold_count = size / 8;
			break;
		}
	}
	return true;
}

/* The .xdata at `rva`, whose size its header words tell. */
static const uint8_t *arm64_xdata(const struct readytorun *r2r, uint32_t rva, size_t *size)
{
	size_t available = 8; /* the header: one word, or two */
	const uint8_t *header = pe_image_at_rva(r2r->image, rva, 8);

	if (!header && !(header = pe_image_at_rva(r2r->image, rva, (uint32_t)(available = 4))))
		return NULL;
	*size = arm64_unwind_xdata_size(header, available);
	return *size ? pe_image_at_rva(r2r->image, rva, (uint32_t)*size) : NULL;
}

bool readytorun_runtime_function(const struct readytorun *r2r, uint32_t index,
				 struct readytorun_runtime_function *function)
{
	const uint8_t *entry = r2r->runtime_functions + (size_t)index * runtime_function_size(r2r);
	struct windows_unwind_code_at unwind = {0};

	if (index >= r2r->runtime_function_count)
		return false;
	function->begin_rva = read_u32(entry);
	function->packed_unwind = 0;
	if (r2r->machine == FRAME_MACHINE_X86_64) {
		function->end_rva = read_u32(entry + 4);
		function->unwind_info_rva = read_u32(entry + 8);
		return true;
	}
	/* arm64: the end is where the unwind data says the function ends. */
	function->unwind_info_rva = read_u32(entry + 4);
	if (function->unwind_info_rva & 3) {
		unwind.packed = function->packed_unwind = function->unwind_info_rva;
		function->unwind_info_rva = 0;
	} else if (!(unwind.info = arm64_xdata(r2r, function->unwind_info_rva, &unwind.info_size)))
		unwind.info_size = 0;
	function->end_rva = function->begin_rva + arm64_unwind_function_length(&unwind);
	return true;
}

bool readytorun_find_runtime_function(const struct readytorun *r2r, uint32_t rva, uint32_t *index)
{
	uint32_t low = 0, high = r2r->runtime_function_count;
	struct readytorun_runtime_function function;

	/* The last function beginning at or before `rva`. */
	while (low < high) {
		uint32_t middle = low + (high - low) / 2;

		readytorun_runtime_function(r2r, middle, &function);
		if (function.begin_rva <= rva)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return false;
	readytorun_runtime_function(r2r, low - 1, &function);
	if (rva >= function.end_rva)
		return false;
	*index = low - 1;
	return true;
}

uint32_t readytorun_hot_part(const struct readytorun *r2r, uint32_t index)
{
	uint32_t low = 0, high = r2r->hot_cold_count;

	/* Sorted by cold index as well as by hot index. */
	while (low < high) {
		uint32_t middle = low + (high - low) / 2;
		uint32_t cold = read_u32(r2r->hot_cold_map + (size_t)middle * 8);

		if (cold == index)
			return read_u32(r2r->hot_cold_map + (size_t)middle * 8 + 4);
		if (cold < index)
			low = middle + 1;
		else
			high = middle;
	}
	return index;
}

bool readytorun_unwind_info(const struct readytorun *r2r,
			    const struct readytorun_runtime_function *function,
			    const uint8_t **bytes, size_t *size)
{
	const uint8_t *header;
	uint32_t length;

	if (r2r->machine == FRAME_MACHINE_AARCH64)
		return !function->packed_unwind &&
		       (*bytes = arm64_xdata(r2r, function->unwind_info_rva, size));
	/* UNWIND_INFO: 4 bytes, the unwind codes (2 bytes each, an even
	 * count), then a handler RVA or the chained RUNTIME_FUNCTION. */
	if (!(header = pe_image_at_rva(r2r->image, function->unwind_info_rva, 4)))
		return false;
	length = 4 + 2 * ((header[2] + 1u) & ~1u);
	if (header[0] >> 3 & UNWIND_FLAG_CHAIN_INFO)
		length += X64_RUNTIME_FUNCTION_SIZE;
	else if (header[0] >> 3 & (UNWIND_FLAG_EXCEPTION_HANDLER | UNWIND_FLAG_TERMINATION_HANDLER))
		length += 4;
	if (!(*bytes = pe_image_at_rva(r2r->image, function->unwind_info_rva, length)))
		return false;
	*size = length;
	return true;
}

/* A NativeFormat integer (readytorun-format.md, "Integer encoding"): the
 * low bits of the first byte say how many bytes follow. Reads at `*rva`
 * within the table's section, advances it, and fails past its end. */
static bool decode_integer(const struct readytorun_table *table, uint32_t *rva, bool is_signed,
			   uint32_t *value)
{
	uint32_t left = *rva < table->section_end_rva ? table->section_end_rva - *rva : 0;
	unsigned length, shift;
	const uint8_t *bytes;
	uint32_t raw;

	if (left < 1 || *rva < table->section_start_rva)
		return false;
	bytes = table->section_base + *rva;
	for (length = 1; length <= 5 && (bytes[0] >> (length - 1) & 1); length++)
		;
	if (length > 5 || left < length)
		return false;
	if (length == 5) {
		raw = read_u32(bytes + 1);
		shift = 0;
	} else {
		raw = 0;
		for (unsigned i = 0; i < length; i++)
			raw |= (uint32_t)bytes[i] << (8 * i);
		/* Sign-extend from the top bit of the bytes read. */
		if (is_signed && length < 4 && (raw >> (8 * length - 1) & 1))
			raw |= ~0u << (8 * length);
		shift = length;
	}
	*value = is_signed ? (uint32_t)((int32_t)raw >> shift) : raw >> shift;
	*rva += length;
	return true;
}

static bool decode_unsigned(const struct readytorun_table *table, uint32_t *rva, uint32_t *value)
{
	return decode_integer(table, rva, false, value);
}

static bool decode_signed(const struct readytorun_table *table, uint32_t *rva, int32_t *value)
{
	uint32_t bits;

	if (!decode_integer(table, rva, true, &bits))
		return false;
	*value = (int32_t)bits;
	return true;
}

static bool read_fixed(const struct readytorun_table *table, uint32_t rva, unsigned size,
		       uint32_t *value)
{
	const uint8_t *bytes;

	if (rva < table->start_rva || rva >= table->end_rva || table->end_rva - rva < size)
		return false;
	bytes = table->section_base + rva;
	*value = size == 1 ? bytes[0] : size == 2 ? read_u16(bytes) : read_u32(bytes);
	return true;
}

/* An entry point (MethodDefEntryPoints element, or after an instance
 * signature): the runtime function index, with flags saying whether fixups
 * follow; the fixups are not needed for names. */
static bool decode_entry_point(const struct readytorun *r2r, const struct readytorun_table *table,
			       uint32_t rva, uint32_t *runtime_function)
{
	uint32_t id;

	if (!decode_unsigned(table, &rva, &id))
		return false;
	*runtime_function = id & 1 ? id >> 2 : id >> 1;
	return *runtime_function < r2r->runtime_function_count;
}

bool readytorun_component_entry_points(const struct readytorun *r2r, uint32_t index,
				       struct readytorun_table *entry_points)
{
	const uint8_t *entry = r2r->components + (size_t)index * 16, *header;
	uint32_t header_rva, section_count;

	/* An entry: the component's COR header, then its READYTORUN_CORE_HEADER
	 * (flags, section count, sections). */
	if (index >= r2r->component_count)
		return false;
	header_rva = read_u32(entry + 8);
	if (!(header = pe_image_at_rva(r2r->image, header_rva, 8)))
		return false;
	section_count = read_u32(header + 4);
	if (section_count > MAX_SECTIONS ||
	    !(header = pe_image_at_rva(r2r->image, header_rva, 8 + section_count * 12)))
		return false;
	for (uint32_t i = 0; i < section_count; i++) {
		const uint8_t *section = header + 8 + i * 12;

		if (read_u32(section) == SECTION_METHOD_DEF_ENTRY_POINTS)
			return table_at(r2r->image, read_u32(section + 4), read_u32(section + 8),
					entry_points);
	}
	return false;
}

uint32_t readytorun_method_entry_count(const struct readytorun_table *entry_points)
{
	uint32_t rva = entry_points->start_rva, header, count, entry_size, most;

	/* A NativeArray starts with its element count and cell size, then
	 * one cell per 16 elements: a count the table cannot hold is cut. */
	if (!entry_points->end_rva || !decode_unsigned(entry_points, &rva, &header))
		return 0;
	count = header >> 2;
	entry_size = 1u << (header & 3);
	most = (entry_points->end_rva - rva) / entry_size * NATIVE_ARRAY_BLOCK_SIZE;
	return count < most ? count : most;
}

/* The element `index` of the NativeArray `table` (readytorun-format.md,
 * "NativeArray"): the RVA of its data; false when the array has none. */
static bool native_array_element(const struct readytorun_table *table, uint32_t index,
				 uint32_t *element_rva)
{
	uint32_t rva = table->start_rva, header, count, block_offset, node;
	unsigned entry_size;

	if (!table->end_rva || !decode_unsigned(table, &rva, &header))
		return false;
	count = header >> 2;
	entry_size = 1u << (header & 3);
	if (index >= count || entry_size > 4 ||
	    !read_fixed(table, rva + entry_size * (index / NATIVE_ARRAY_BLOCK_SIZE), entry_size,
			&block_offset))
		return false;
	/* A block of 16 elements is a binary tree on the index's low 4 bits. */
	node = rva + block_offset;
	for (uint32_t bit = NATIVE_ARRAY_BLOCK_SIZE / 2; bit > 0; bit >>= 1) {
		uint32_t next = node, value;

		if (!decode_unsigned(table, &next, &value))
			return false;
		if ((index & bit) && (value & 2)) {
			node += value >> 2;
			continue;
		}
		if (!(index & bit) && (value & 1)) {
			node = next;
			continue;
		}
		/* A leaf standing for one element of the block. */
		if ((value & 3) == 0 && (value >> 2) == (index & (NATIVE_ARRAY_BLOCK_SIZE - 1))) {
			*element_rva = next;
			return true;
		}
		return false;
	}
	*element_rva = node;
	return true;
}

bool readytorun_method_entry_point(const struct readytorun *r2r,
				   const struct readytorun_table *entry_points, uint32_t method_row,
				   uint32_t *runtime_function)
{
	uint32_t element;

	return method_row > 0 && native_array_element(entry_points, method_row - 1, &element) &&
	       decode_entry_point(r2r, entry_points, element, runtime_function);
}

bool readytorun_load_debug_info(struct readytorun *r2r)
{
	if (!r2r->debug_info_tried) {
		r2r->debug_info_tried = true;
		if (r2r->debug_info_size && !table_at(r2r->image, r2r->debug_info_rva,
						      r2r->debug_info_size, &r2r->debug_info))
			r2r->debug_info = (struct readytorun_table){0};
	}
	return r2r->debug_info.end_rva != 0;
}

bool readytorun_debug_info(struct readytorun *r2r, uint32_t runtime_function, const uint8_t **bytes,
			   size_t *available)
{
	const struct readytorun_table *table = &r2r->debug_info;
	uint32_t element, lookback, start;

	/* The element is a count of bytes back to an identical method's
	 * info, or 0 and the info right after it. */
	if (!readytorun_load_debug_info(r2r) ||
	    !native_array_element(table, runtime_function, &element))
		return false;
	start = element;
	if (!decode_unsigned(table, &start, &lookback))
		return false;
	if (lookback)
		start = element - lookback;
	if (lookback > element || start < table->section_start_rva ||
	    start >= table->section_end_rva)
		return false;
	*bytes = table->section_base + start;
	*available = table->section_end_rva - start;
	return true;
}

bool readytorun_next_instance_entry(const struct readytorun *r2r, uint32_t *cursor,
				    const uint8_t **signature, size_t *available)
{
	const struct readytorun_table *table = &r2r->instance_entry_points;
	uint32_t header, cells, bucket_count, entry_size, end_offset, target, next;
	int32_t delta;

	if (!table->end_rva || !read_fixed(table, table->start_rva, 1, &header))
		return false;
	/* A byte of header (log2 of the bucket count, cell size), then one
	 * cell per bucket and a last cell with the end of the entries, as
	 * offsets from the first cell. */
	cells = table->start_rva + 1;
	bucket_count = header >> 2 < 31 ? 1u << (header >> 2) : 0;
	entry_size = 1u << (header & 3);
	if (entry_size > 4 ||
	    !read_fixed(table, cells + entry_size * bucket_count, entry_size, &end_offset))
		return false;
	if (*cursor == 0) {
		uint32_t first_offset;

		if (!read_fixed(table, cells, entry_size, &first_offset))
			return false;
		*cursor = cells + first_offset;
	}
	if (*cursor < cells || *cursor >= cells + (uint64_t)end_offset)
		return false;
	/* An entry: the low byte of its hash, then the signed offset of the
	 * entry's data from where that offset is written. */
	next = *cursor + 1;
	if (!decode_signed(table, &next, &delta))
		return false;
	target = *cursor + 1 + (uint32_t)delta;
	*cursor = next;
	if (target < table->section_start_rva || target >= table->section_end_rva)
		return false;
	*signature = table->section_base + target;
	*available = table->section_end_rva - target;
	return true;
}

bool readytorun_instance_entry_point(const struct readytorun *r2r, const uint8_t *signature,
				     size_t signature_length, uint32_t *runtime_function)
{
	const struct readytorun_table *table = &r2r->instance_entry_points;
	uint64_t rva = (uint64_t)(signature - table->section_base) + signature_length;

	if (rva >= table->section_end_rva)
		return false;
	return decode_entry_point(r2r, table, (uint32_t)rva, runtime_function);
}
