/* What ties a stripped binary to its separate debug file: the GNU build-id
 * note (NT_GNU_BUILD_ID) both carry, and the .gnu_debuglink section of the
 * binary (the debug file's name and the CRC-32 of its bytes). */
#ifndef PROFCPU_BUILD_ID_H
#define PROFCPU_BUILD_ID_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { BUILD_ID_MAX = 64, BUILD_ID_HEX_MAX = 2 * BUILD_ID_MAX + 1, DEBUGLINK_NAME_MAX = 256 };

struct build_id {
	uint8_t bytes[BUILD_ID_MAX];
	size_t size; /* 0: none */
};

struct debuglink {
	char name[DEBUGLINK_NAME_MAX]; /* "": none */
	uint32_t crc;
};

/* Reads the GNU build-id from the note sections, or from PT_NOTE segments
 * when the section headers are gone. Returns false when there is none. */
bool build_id_read(Elf *elf, struct build_id *id);

/* Finds the GNU build-id in raw note bytes (`data` in the file's layout, as
 * libelf gives it). Notes that overrun the data end the search. */
bool build_id_from_notes(Elf_Data *data, struct build_id *id);

bool build_id_equal(const struct build_id *a, const struct build_id *b);

/* Lower-case hex, as build-id paths and symbol servers spell it. */
void build_id_to_hex(const struct build_id *id, char hex[BUILD_ID_HEX_MAX]);

/* Reads .gnu_debuglink. The name must be a plain file name (no '/', not "."
 * or ".."): it comes from an untrusted file and is joined to folders.
 * Returns false when the section is missing or malformed. */
bool debuglink_read(Elf *elf, struct debuglink *link);

/* Parses the section's bytes: NUL-terminated name, padding to 4 bytes, then
 * the CRC-32 in the file's byte order (`big_endian`). */
bool debuglink_parse(const uint8_t *bytes, size_t size, bool big_endian, struct debuglink *link);

/* The CRC-32 (zlib's polynomial, as objcopy --add-gnu-debuglink computes
 * it) of the whole file `fd`, read from its start. */
bool debuglink_crc_of_file(int fd, uint32_t *crc);

#endif
