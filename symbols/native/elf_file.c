#include "elf_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool read_segments(struct elf_file *file)
{
	size_t count;
	GElf_Phdr header;

	if (elf_getphdrnum(file->elf, &count) != 0)
		return false;
	if (count == 0)
		return true;
	file->segments = calloc(count, sizeof(*file->segments));
	if (!file->segments)
		return false;
	for (size_t i = 0; i < count; i++) {
		if (!gelf_getphdr(file->elf, (int)i, &header) || header.p_type != PT_LOAD)
			continue;
		file->segments[file->segment_count++] = (struct load_segment){
		    .file_offset = header.p_offset,
		    .file_size = header.p_filesz,
		    .address = header.p_vaddr,
		};
	}
	return true;
}

struct elf_file *elf_file_open(int fd)
{
	struct elf_file *file;
	struct stat status;

	if (fd < 0)
		return NULL;
	/* A FIFO or device in the target's root must not be read (or block). */
	if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
		close(fd);
		return NULL;
	}
	elf_version(EV_CURRENT);
	file = calloc(1, sizeof(*file));
	if (!file) {
		close(fd);
		return NULL;
	}
	file->fd = fd;
	file->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!file->elf || elf_kind(file->elf) != ELF_K_ELF || !read_segments(file)) {
		elf_file_close(file);
		return NULL;
	}
	build_id_read(file->elf, &file->build_id);
	debuglink_read(file->elf, &file->debuglink);
	return file;
}

void elf_file_close(struct elf_file *file)
{
	if (!file)
		return;
	if (file->elf)
		elf_end(file->elf);
	close(file->fd);
	free(file->segments);
	free(file);
}

bool load_segments_find_address(const struct load_segment *segments, size_t count,
				uint64_t file_offset, uint64_t *address)
{
	for (size_t i = 0; i < count; i++) {
		const struct load_segment *segment = &segments[i];

		if (file_offset >= segment->file_offset &&
		    file_offset - segment->file_offset < segment->file_size) {
			*address = segment->address + (file_offset - segment->file_offset);
			return true;
		}
	}
	return false;
}

bool elf_file_read_at(const struct elf_file *file, uint64_t address, void *bytes, size_t size)
{
	for (size_t i = 0; i < file->segment_count; i++) {
		const struct load_segment *segment = &file->segments[i];

		if (address >= segment->address &&
		    address - segment->address <= segment->file_size &&
		    size <= segment->file_size - (address - segment->address))
			return pread(file->fd, bytes, size,
				     (off_t)(segment->file_offset +
					     (address - segment->address))) == (ssize_t)size;
	}
	return false;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, GElf_Shdr *header)
{
	Elf_Scn *section = NULL;

	while ((section = elf_nextscn(elf, section)))
		if (gelf_getshdr(section, header) && header->sh_type == type)
			return section;
	return NULL;
}

bool elf_file_has_symtab(const struct elf_file *file)
{
	GElf_Shdr header;

	return find_section(file->elf, SHT_SYMTAB, &header) != NULL;
}

static enum symbol_rank rank_of(const GElf_Sym *symbol)
{
	if (GELF_ST_TYPE(symbol->st_info) == STT_NOTYPE)
		return SYMBOL_RANK_LABEL;
	switch (GELF_ST_BIND(symbol->st_info)) {
	case STB_GLOBAL:
		return SYMBOL_RANK_GLOBAL;
	case STB_WEAK:
		return SYMBOL_RANK_WEAK;
	default:
		return SYMBOL_RANK_LOCAL;
	}
}

bool elf_file_has_line_table(const struct elf_file *file)
{
	Elf_Scn *section = NULL;
	size_t names;
	GElf_Shdr header;

	if (elf_getshdrstrndx(file->elf, &names) != 0)
		return false;
	while ((section = elf_nextscn(file->elf, section))) {
		const char *name;

		if (gelf_getshdr(section, &header) && header.sh_type == SHT_PROGBITS &&
		    (name = elf_strptr(file->elf, names, header.sh_name)) &&
		    (!strcmp(name, ".debug_line") || !strcmp(name, ".zdebug_line")))
			return true;
	}
	return false;
}

/* Code symbols: functions, and untyped labels placed in a section (hand-written
 * assembly often has no type); data objects, files and sections are not. */
static bool names_code(const GElf_Sym *symbol)
{
	int type = GELF_ST_TYPE(symbol->st_info);

	if (symbol->st_shndx == SHN_UNDEF || symbol->st_shndx == SHN_ABS)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC || (type == STT_NOTYPE && symbol->st_size);
}

/* The entries of symbol table `section` (NULL: none): its data and how
 * many, symbol 0 (always null) included. False when it has none to read. */
static bool symbol_entries(Elf_Scn *section, const GElf_Shdr *header, Elf_Data **data,
			   size_t *count)
{
	if (!section || header->sh_entsize == 0 || !(*data = elf_getdata(section, NULL)))
		return false;
	*count = (*data)->d_size / header->sh_entsize;
	if (*count > INT_MAX) /* gelf_getsym takes an int index */
		*count = INT_MAX;
	return true;
}

size_t elf_file_read_symbols(const struct elf_file *file, struct symbol_table *table)
{
	GElf_Shdr header;
	Elf_Scn *section = find_section(file->elf, SHT_SYMTAB, &header);
	Elf_Data *data;
	size_t count, added = 0;

	if (!section)
		section = find_section(file->elf, SHT_DYNSYM, &header);
	if (!symbol_entries(section, &header, &data, &count))
		return 0;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym symbol;
		const char *name;

		if (!gelf_getsym(data, (int)i, &symbol) || !names_code(&symbol))
			continue;
		name = elf_strptr(file->elf, header.sh_link, symbol.st_name);
		if (!name || !*name)
			continue;
		if (!symbol_table_add(table, name, symbol.st_value, symbol.st_size,
				      rank_of(&symbol)))
			break;
		added++;
	}
	return added;
}

bool elf_file_export(const struct elf_file *file, const char *name, uint64_t *value, uint64_t *size)
{
	GElf_Shdr header;
	Elf_Scn *section = find_section(file->elf, SHT_DYNSYM, &header);
	Elf_Data *data;
	size_t count;

	if (!symbol_entries(section, &header, &data, &count))
		return false;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym symbol;
		const char *symbol_name;

		if (gelf_getsym(data, (int)i, &symbol) && symbol.st_shndx != SHN_UNDEF &&
		    (symbol_name = elf_strptr(file->elf, header.sh_link, symbol.st_name)) &&
		    !strcmp(symbol_name, name)) {
			if (value)
				*value = symbol.st_value;
			if (size)
				*size = symbol.st_size;
			return true;
		}
	}
	return false;
}

bool elf_file_exports(const struct elf_file *file, const char *name)
{
	return elf_file_export(file, name, NULL, NULL);
}
