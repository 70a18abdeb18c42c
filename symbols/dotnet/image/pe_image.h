/* A PE (Portable Executable) file held in memory, as .NET assemblies are:
 * its COFF header, section table and data directories, and the mapping
 * between relative virtual addresses (RVAs, what the image's own tables
 * hold) and offsets in the file (what a mapping of the file gives).
 *
 * The bytes are untrusted: every accessor checks that what it returns lies
 * inside the file. Nothing is copied; the image points into `data`. */
#ifndef PROFCPU_PE_IMAGE_H
#define PROFCPU_PE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PE_IMAGE_MAX_SECTIONS  96		     /* the PE format's own limit */
#define MANAGED_IMAGE_MAX_SIZE (1024u * 1024 * 1024) /* larger assemblies are not read */

/* Data directory entries used here. */
#define PE_DIRECTORY_CLI_HEADER 14

#define PE_MACHINE_AMD64 0x8664
#define PE_MACHINE_ARM64 0xaa64

struct pe_section {
	uint32_t virtual_address, virtual_size; /* where the section is mapped */
	uint32_t raw_offset, raw_size;		/* where its bytes are in the file */
};

/* For a file read on demand: makes the `length` bytes at `file_offset` of
 * the image's data hold the file's bytes. False when they cannot be read. */
struct pe_loader {
	bool (*load)(void *context, uint64_t file_offset, uint64_t length);
	void *context;
};

struct pe_image {
	const uint8_t *data;
	size_t size;
	uint16_t machine;   /* IMAGE_FILE_MACHINE_*; .NET on Linux also xors an OS tag in */
	uint32_t timestamp; /* the COFF TimeDateStamp: a build identity */
	uint32_t directory_count;
	const uint8_t *directories; /* directory_count entries of (RVA, size) */
	size_t section_count;
	struct pe_section sections[PE_IMAGE_MAX_SECTIONS];
	struct pe_loader loader; /* load NULL: all of `data` is there */
};

/* Reads the headers of the PE file in `data` (`size` bytes, which must stay
 * valid as long as the image is used). With `loader` (may be NULL), `data`
 * is filled on demand: every accessor below loads what it returns. False
 * when it is not a PE file or a header lies outside the data. */
bool pe_image_parse(struct pe_image *image, const uint8_t *data, size_t size,
		    const struct pe_loader *loader);

/* Stops loading on demand: what was not loaded reads as zeros. */
void pe_image_stop_loading(struct pe_image *image);

/* The RVA and size of data directory `index`; false when the image has no
 * such directory or it is empty. */
bool pe_image_directory(const struct pe_image *image, uint32_t index, uint32_t *rva,
			uint32_t *size);

/* The `length` bytes at `rva`, when they lie in one section's bytes in the
 * file (and could be loaded); NULL otherwise. */
const uint8_t *pe_image_at_rva(const struct pe_image *image, uint32_t rva, uint32_t length);

/* The RVA of the byte at `file_offset` in the file, through the section
 * that holds it; false when no section does (headers, padding). */
bool pe_image_rva_of_file_offset(const struct pe_image *image, uint64_t file_offset, uint32_t *rva);

/* Whether `a` and `b` are the headers of one build of one image: the same
 * machine, build stamp, sections and data directories (a copy the runtime
 * made in memory keeps them; it may change the preferred base). */
bool pe_image_same_build(const struct pe_image *a, const struct pe_image *b);

/* The size the image takes in memory: the end of its last section. */
uint64_t pe_image_memory_size(const struct pe_image *image);

#endif
