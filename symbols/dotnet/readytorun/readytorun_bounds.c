#include "readytorun_bounds.h"

/* Nibble-encoded numbers past this many nibbles cannot hold 32 bits. */
#define MAX_NUMBER_NIBBLES 11
#define DEBUG_INFO_FAT	   0 /* from major version 17: the header's first number */
#define FAT_HEADER_SIZES   6
#define IL_OFFSET_BIAS	   3 /* IL offsets are written plus 3: the JIT's marks are -3 to -1 */
/* Packed entries are gathered in 64 bits a byte at a time. */
#define MAX_PACKED_ENTRY_BITS 56
/* A method's bounds take a few bytes per IL statement; more is a damaged
 * image, whose every lookup would read them all. */
#define MAX_BOUNDS_SIZE (1u << 20)

struct nibbles {
	const uint8_t *bytes;
	size_t size;
	size_t next; /* nibble index: 2 per byte, the low one first */
};

static bool read_number(struct nibbles *nibbles, uint32_t *value)
{
	*value = 0;
	for (unsigned count = 0; count < MAX_NUMBER_NIBBLES; count++) {
		size_t byte = nibbles->next / 2;
		unsigned nibble;

		if (byte >= nibbles->size || *value >> 29)
			return false;
		nibble = nibbles->next % 2 ? nibbles->bytes[byte] >> 4 : nibbles->bytes[byte] & 0xf;
		nibbles->next++;
		*value = *value << 3 | (nibble & 7);
		if (!(nibble & 8))
			return true;
	}
	return false;
}

/* The byte after the last nibble read. */
static size_t next_byte(const struct nibbles *nibbles)
{
	return (nibbles->next + 1) / 2;
}

/* The bounds' bytes, from the header of the debug info. */
static bool find_bounds(const uint8_t *bytes, size_t available, uint16_t major_version,
			struct nibbles *bounds)
{
	struct nibbles header = {bytes, available, 0};
	uint32_t bounds_size, skipped;

	if (!read_number(&header, &bounds_size))
		return false;
	if (major_version >= 17 && bounds_size == DEBUG_INFO_FAT) {
		if (!read_number(&header, &bounds_size))
			return false;
		for (unsigned i = 1; i < FAT_HEADER_SIZES; i++)
			if (!read_number(&header, &skipped))
				return false;
	} else if (!read_number(&header, &skipped)) {
		return false;
	}
	if (bounds_size == 0 || bounds_size > MAX_BOUNDS_SIZE ||
	    bounds_size > available - next_byte(&header))
		return false;
	*bounds = (struct nibbles){bytes + next_byte(&header), bounds_size, 0};
	return true;
}

bool readytorun_bounds_start(struct readytorun_bounds *bounds, const uint8_t *bytes,
			     size_t available, uint16_t major_version)
{
	struct nibbles nibbles;
	uint32_t count, native_bits, il_bits;

	*bounds = (struct readytorun_bounds){0};
	if (major_version > 17 || !find_bounds(bytes, available, major_version, &nibbles) ||
	    !read_number(&nibbles, &count) || count == 0)
		return false;
	bounds->bytes = nibbles.bytes;
	bounds->size = nibbles.size;
	bounds->entries_left = count;
	if (major_version < 16) {
		bounds->nibble = nibbles.next;
		return true;
	}
	if (!read_number(&nibbles, &native_bits) || !read_number(&nibbles, &il_bits))
		return false;
	bounds->source_bits = major_version >= 17 ? 3 : 2;
	bounds->native_bits = native_bits + 1;
	bounds->il_bits = il_bits + 1;
	bounds->next_byte = next_byte(&nibbles);
	/* Widths a 32-bit offset does not need are a damaged header. */
	return native_bits < 32 && il_bits < 32 &&
	       bounds->source_bits + bounds->native_bits + bounds->il_bits <= MAX_PACKED_ENTRY_BITS;
}

static bool next_nibble_encoded(struct readytorun_bounds *bounds, uint32_t *native_delta,
				uint32_t *biased_il_offset)
{
	struct nibbles nibbles = {bounds->bytes, bounds->size, bounds->nibble};
	uint32_t source_type;

	if (!read_number(&nibbles, native_delta) || !read_number(&nibbles, biased_il_offset) ||
	    !read_number(&nibbles, &source_type))
		return false;
	bounds->nibble = nibbles.next;
	return true;
}

static bool next_packed(struct readytorun_bounds *bounds, uint32_t *native_delta,
			uint32_t *biased_il_offset)
{
	unsigned width = bounds->source_bits + bounds->native_bits + bounds->il_bits;
	uint64_t entry;

	while (bounds->bit_count < width) {
		if (bounds->next_byte >= bounds->size)
			return false;
		bounds->bits |= (uint64_t)bounds->bytes[bounds->next_byte++] << bounds->bit_count;
		bounds->bit_count += 8;
	}
	entry = bounds->bits & ((UINT64_C(1) << width) - 1);
	bounds->bits >>= width;
	bounds->bit_count -= width;
	entry >>= bounds->source_bits;
	*native_delta = (uint32_t)(entry & ((UINT64_C(1) << bounds->native_bits) - 1));
	*biased_il_offset = (uint32_t)(entry >> bounds->native_bits);
	return true;
}

bool readytorun_bounds_next(struct readytorun_bounds *bounds, struct managed_line_map_entry *entry)
{
	uint32_t native_delta, biased_il_offset;

	if (bounds->entries_left == 0 ||
	    !(bounds->native_bits
		  ? next_packed(bounds, &native_delta, &biased_il_offset)
		  : next_nibble_encoded(bounds, &native_delta, &biased_il_offset)) ||
	    native_delta > UINT32_MAX - bounds->native_offset) {
		bounds->entries_left = 0;
		return false;
	}
	bounds->entries_left--;
	bounds->native_offset += native_delta;
	entry->native_offset = bounds->native_offset;
	entry->il_offset = biased_il_offset - IL_OFFSET_BIAS; /* wraps to the JIT's marks */
	return true;
}
