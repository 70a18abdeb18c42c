/* The map of a precompiled method's native offsets to IL offsets, from the
 * debug info a ReadyToRun image keeps for it (readytorun_debug_info()), as
 * dotnet/runtime's src/coreclr/vm/debuginfostore.cpp writes it:
 *
 *   header    nibbles: the bounds' size in bytes, the variables' size (from
 *             major version 17, a 0 first says that six sizes follow:
 *             bounds, variables and four blobs this reader skips); then,
 *             from the next byte on, the bounds and the variables
 *   bounds    nibbles: the entry count; up to major version 15, each entry
 *             as three nibble-encoded numbers (native offset delta, IL
 *             offset + 3, source type); from 16 on, the bit width of the
 *             native deltas and of the IL offsets (each less one), then
 *             from the next byte on the entries bit-packed, low bits
 *             first: source type (2 bits; 3 from 17 on), native offset
 *             delta, IL offset + 3
 *
 * A nibble-encoded number is read low nibble of a byte first; each nibble
 * gives 3 bits, most significant first, and its high bit says another
 * follows. Entries come in native offset order; IL offsets 0xfffffffd to
 * 0xffffffff are the JIT's epilog, prolog and no-mapping marks
 * (managed_lines.h).
 *
 * The bytes are the target's: every read stays inside the bytes given and
 * the bounds' own size (at most 1 MiB), counts are bounded by the bits
 * there, and an encoding this reader does not know reads as no map. */
#ifndef PROFCPU_READYTORUN_BOUNDS_H
#define PROFCPU_READYTORUN_BOUNDS_H

#include "managed_lines.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct readytorun_bounds {
	const uint8_t *bytes; /* the bounds */
	size_t size;
	size_t nibble;	  /* the next nibble to read (up to major version 15) */
	size_t next_byte; /* the next byte of packed entries (from 16 on) */
	uint64_t bits;	  /* packed bits read and not yet used */
	unsigned bit_count;
	unsigned source_bits, native_bits, il_bits; /* 0 for nibble-encoded entries */
	uint32_t entries_left;
	uint32_t native_offset;
};

/* Starts reading the bounds of the debug info at `bytes` (`available`
 * bytes to the end of its section) of an image of ReadyToRun major version
 * `major_version`. False when the info holds no bounds, or they cannot be
 * read. */
bool readytorun_bounds_start(struct readytorun_bounds *bounds, const uint8_t *bytes,
			     size_t available, uint16_t major_version);

/* The next entry, in native offset order; false after the last, or at
 * bytes that end too soon. */
bool readytorun_bounds_next(struct readytorun_bounds *bounds, struct managed_line_map_entry *entry);

#endif
