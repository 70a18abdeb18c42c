#include "pe_image.h"
#include "little_endian.h"

#include <string.h>

#define DOS_MAGIC		 0x5a4d	    /* "MZ" */
#define PE_SIGNATURE		 0x00004550 /* "PE\0\0" */
#define OPTIONAL_MAGIC_PE32	 0x10b
#define OPTIONAL_MAGIC_PE32_PLUS 0x20b
#define COFF_HEADER_SIZE	 20
#define SECTION_HEADER_SIZE	 40

static bool load(const struct pe_image *image, uint64_t file_offset, uint64_t length)
{
	return !image->loader.load ||
	       image->loader.load(image->loader.context, file_offset, length);
}

bool pe_image_parse(struct pe_image *image, const uint8_t *data, size_t size,
		    const struct pe_loader *loader)
{
	uint64_t pe_offset, optional_offset, sections_offset, directories_offset;
	uint16_t optional_size, optional_magic;
	uint32_t count_field_offset;

	memset(image, 0, sizeof(*image));
	if (loader)
		image->loader = *loader;
	if (size < 64 || !load(image, 0, 64) || read_u16(data) != DOS_MAGIC)
		return false;
	pe_offset = read_u32(data + 60);
	if (pe_offset > size || size - pe_offset < 4 + COFF_HEADER_SIZE ||
	    !load(image, pe_offset, 4 + COFF_HEADER_SIZE) ||
	    read_u32(data + pe_offset) != PE_SIGNATURE)
		return false;
	image->data = data;
	image->size = size;
	image->machine = read_u16(data + pe_offset + 4);
	image->section_count = read_u16(data + pe_offset + 6);
	image->timestamp = read_u32(data + pe_offset + 8);
	optional_size = read_u16(data + pe_offset + 20);
	optional_offset = pe_offset + 4 + COFF_HEADER_SIZE;
	sections_offset = optional_offset + optional_size;
	if (image->section_count > PE_IMAGE_MAX_SECTIONS || sections_offset > size ||
	    (size - sections_offset) / SECTION_HEADER_SIZE < image->section_count ||
	    optional_size < 2 ||
	    !load(image, optional_offset,
		  optional_size + image->section_count * SECTION_HEADER_SIZE))
		return false;
	optional_magic = read_u16(data + optional_offset);
	if (optional_magic == OPTIONAL_MAGIC_PE32)
		count_field_offset = 92;
	else if (optional_magic == OPTIONAL_MAGIC_PE32_PLUS)
		count_field_offset = 108;
	else
		return false;
	if (optional_size < count_field_offset + 4)
		return false;
	image->directory_count = read_u32(data + optional_offset + count_field_offset);
	directories_offset = optional_offset + count_field_offset + 4;
	if (image->directory_count > (optional_size - count_field_offset - 4) / 8)
		image->directory_count = (optional_size - count_field_offset - 4) / 8;
	image->directories = data + directories_offset;
	for (size_t i = 0; i < image->section_count; i++) {
		const uint8_t *header = data + sections_offset + i * SECTION_HEADER_SIZE;

		image->sections[i] = (struct pe_section){
		    .virtual_size = read_u32(header + 8),
		    .virtual_address = read_u32(header + 12),
		    .raw_size = read_u32(header + 16),
		    .raw_offset = read_u32(header + 20),
		};
	}
	return true;
}

bool pe_image_directory(const struct pe_image *image, uint32_t index, uint32_t *rva, uint32_t *size)
{
	if (index >= image->directory_count)
		return false;
	*rva = read_u32(image->directories + index * 8);
	*size = read_u32(image->directories + index * 8 + 4);
	return *rva != 0 && *size != 0;
}

/* The bytes of a section in the file: its raw size, cut to the file and to
 * its virtual size (what is past it in the file is not mapped there). */
static uint64_t section_file_bytes(const struct pe_image *image, const struct pe_section *section)
{
	uint64_t bytes = section->raw_size;

	if (section->virtual_size && section->virtual_size < bytes)
		bytes = section->virtual_size;
	if (section->raw_offset >= image->size)
		return 0;
	if (bytes > image->size - section->raw_offset)
		bytes = image->size - section->raw_offset;
	return bytes;
}

const uint8_t *pe_image_at_rva(const struct pe_image *image, uint32_t rva, uint32_t length)
{
	for (size_t i = 0; i < image->section_count; i++) {
		const struct pe_section *section = &image->sections[i];
		uint64_t bytes = section_file_bytes(image, section);

		uint64_t file_offset =
		    section->raw_offset + (uint64_t)(rva - section->virtual_address);

		if (rva >= section->virtual_address &&
		    (uint64_t)rva - section->virtual_address < bytes &&
		    bytes - (rva - section->virtual_address) >= length)
			return load(image, file_offset, length) ? image->data + file_offset : NULL;
	}
	return NULL;
}

void pe_image_stop_loading(struct pe_image *image)
{
	image->loader.load = NULL;
}

bool pe_image_rva_of_file_offset(const struct pe_image *image, uint64_t file_offset, uint32_t *rva)
{
	for (size_t i = 0; i < image->section_count; i++) {
		const struct pe_section *section = &image->sections[i];

		if (file_offset >= section->raw_offset &&
		    file_offset - section->raw_offset < section_file_bytes(image, section)) {
			*rva = section->virtual_address +
			       (uint32_t)(file_offset - section->raw_offset);
			return true;
		}
	}
	return false;
}

bool pe_image_same_build(const struct pe_image *a, const struct pe_image *b)
{
	return a->machine == b->machine && a->timestamp == b->timestamp &&
	       a->section_count == b->section_count &&
	       !memcmp(a->sections, b->sections, a->section_count * sizeof(a->sections[0])) &&
	       a->directory_count == b->directory_count &&
	       !memcmp(a->directories, b->directories, a->directory_count * 8);
}

uint64_t pe_image_memory_size(const struct pe_image *image)
{
	uint64_t end = 0;

	for (size_t i = 0; i < image->section_count; i++) {
		const struct pe_section *section = &image->sections[i];
		uint64_t size = section->virtual_size ? section->virtual_size : section->raw_size;

		if ((uint64_t)section->virtual_address + size > end)
			end = (uint64_t)section->virtual_address + size;
	}
	return end;
}
