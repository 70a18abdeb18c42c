/* Little-endian integers read from unaligned bytes (PE files and .NET
 * metadata are little-endian whatever the machine). The caller has checked
 * that the bytes are there. */
#ifndef PROFCPU_LITTLE_ENDIAN_H
#define PROFCPU_LITTLE_ENDIAN_H

#include <stdint.h>

static inline uint16_t read_u16(const uint8_t *bytes)
{
	return (uint16_t)(bytes[0] | bytes[1] << 8);
}

static inline uint32_t read_u32(const uint8_t *bytes)
{
	return (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 |
	       (uint32_t)bytes[3] << 24;
}

static inline uint64_t read_u64(const uint8_t *bytes)
{
	return (uint64_t)read_u32(bytes) | (uint64_t)read_u32(bytes + 4) << 32;
}

#endif
