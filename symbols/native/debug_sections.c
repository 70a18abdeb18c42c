#include "debug_sections.h"
#include "buffer.h"

#include <isa-l/igzip_lib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Sections no reader of symbols/native asks libdw for. */
static const char *const unread_sections[] = {
    ".debug_loc",	   ".debug_loclists", ".debug_aranges",	 ".debug_macro",
    ".debug_macinfo",	   ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
    ".debug_gnu_pubtypes", ".debug_names",
};

/* An inflated section's size is bounded: a hostile header may claim any. */
#define MAX_SECTION_SIZE (1u << 30)

struct debug_sections {
	void **buffers;
	size_t count, capacity;
};

static bool is_unread(const char *name)
{
	for (size_t i = 0; i < sizeof(unread_sections) / sizeof(*unread_sections); i++)
		if (!strcmp(name, unread_sections[i]))
			return true;
	return false;
}

/* The bytes of a zlib-compressed (ELFCOMPRESS_ZLIB) section, inflated into
 * a buffer of the size its header gives; NULL when they do not fill it. */
static void *inflate_section(Elf *elf, Elf_Scn *section, GElf_Chdr *header)
{
	Elf_Data *raw = elf_rawdata(section, NULL);
	size_t header_size =
	    gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	struct inflate_state state;
	uint8_t *bytes;

	if (!raw || !gelf_getchdr(section, header) || header->ch_type != ELFCOMPRESS_ZLIB ||
	    header->ch_size == 0 || header->ch_size > MAX_SECTION_SIZE ||
	    raw->d_size <= header_size || raw->d_size - header_size > UINT32_MAX ||
	    !(bytes = malloc(header->ch_size)))
		return NULL;
	isal_inflate_init(&state);
	state.next_in = (uint8_t *)raw->d_buf + header_size;
	state.avail_in = (uint32_t)(raw->d_size - header_size);
	state.next_out = bytes;
	state.avail_out = (uint32_t)header->ch_size;
	state.crc_flag = ISAL_ZLIB;
	if (isal_inflate(&state) != ISAL_DECOMP_OK || state.avail_out != 0 ||
	    state.block_state != ISAL_BLOCK_FINISH) {
		free(bytes);
		return NULL;
	}
	return bytes;
}

/* Makes `section` read as its inflated `bytes`, as elf_compress() would
 * leave it, for libdw to take as it is. */
static bool install_inflated(Elf_Scn *section, GElf_Shdr *header, const GElf_Chdr *compression,
			     void *bytes)
{
	Elf_Data *data = elf_getdata(section, NULL);

	if (!data)
		return false;
	header->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	header->sh_size = compression->ch_size;
	if (!gelf_update_shdr(section, header))
		return false;
	*data = (Elf_Data){.d_buf = bytes,
			   .d_type = ELF_T_BYTE,
			   .d_version = EV_CURRENT,
			   .d_size = compression->ch_size,
			   .d_align = compression->ch_addralign ? compression->ch_addralign : 1};
	return true;
}

static void keep(struct debug_sections **sections, void *bytes)
{
	if (!*sections)
		*sections = calloc(1, sizeof(**sections));
	/* Without room to keep it, the buffer would leak: give it up. */
	if (!*sections || !buffer_reserve((void **)&(*sections)->buffers, &(*sections)->capacity,
					  (*sections)->count + 1, sizeof(void *))) {
		free(bytes);
		return;
	}
	(*sections)->buffers[(*sections)->count++] = bytes;
}

struct debug_sections *debug_sections_prepare(Elf *elf)
{
	struct debug_sections *sections = NULL;
	Elf_Scn *section = NULL;
	size_t names;

	if (elf_getshdrstrndx(elf, &names) != 0)
		return NULL;
	while ((section = elf_nextscn(elf, section))) {
		GElf_Shdr header;
		GElf_Chdr compression;
		const char *name;
		void *bytes;

		if (!gelf_getshdr(section, &header) ||
		    !(name = elf_strptr(elf, names, header.sh_name)) || strncmp(name, ".debug_", 7))
			continue;
		if (is_unread(name)) {
			header.sh_name = 0; /* the empty name, which libdw skips */
			gelf_update_shdr(section, &header);
		} else if ((header.sh_flags & SHF_COMPRESSED) &&
			   (bytes = inflate_section(elf, section, &compression))) {
			keep(&sections, bytes);
			if (!install_inflated(section, &header, &compression, bytes))
				continue; /* libdw inflates it, as before */
		}
	}
	return sections;
}

const uint8_t *debug_section_read(Elf *elf, const char *name, size_t *size, void **owned)
{
	Elf_Scn *section = NULL;
	size_t names;

	*owned = NULL;
	*size = 0;
	if (elf_getshdrstrndx(elf, &names) != 0)
		return NULL;
	while ((section = elf_nextscn(elf, section))) {
		GElf_Shdr header;
		GElf_Chdr compression;
		const char *found;
		Elf_Data *data;

		if (!gelf_getshdr(section, &header) || header.sh_type != SHT_PROGBITS ||
		    !(found = elf_strptr(elf, names, header.sh_name)))
			continue;
		if (!strcmp(found, name) && (header.sh_flags & SHF_COMPRESSED)) {
			if ((*owned = inflate_section(elf, section, &compression)))
				*size = compression.ch_size;
			return *owned;
		}
		/* The GNU form (.zdebug_line), which libelf inflates in place. */
		if (!strcmp(found, name) ||
		    (!strncmp(found, ".z", 2) && !strcmp(found + 2, name + 1) &&
		     elf_compress_gnu(section, 0, 0) == 1)) {
			if (!(data = elf_getdata(section, NULL)) || !data->d_buf)
				return NULL;
			*size = data->d_size;
			return data->d_buf;
		}
	}
	return NULL;
}

void debug_sections_free(struct debug_sections *sections)
{
	if (!sections)
		return;
	for (size_t i = 0; i < sections->count; i++)
		free(sections->buffers[i]);
	free(sections->buffers);
	free(sections);
}
