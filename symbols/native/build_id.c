#include "build_id.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

bool build_id_from_notes(Elf_Data *data, struct build_id *id)
{
	GElf_Nhdr header;
	size_t offset = 0, next, name_offset, desc_offset;

	while (offset < data->d_size &&
	       (next = gelf_getnote(data, offset, &header, &name_offset, &desc_offset)) > 0) {
		if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
		    memcmp((const char *)data->d_buf + name_offset, "GNU", 4) == 0 &&
		    header.n_descsz > 0 && header.n_descsz <= BUILD_ID_MAX) {
			memcpy(id->bytes, (const uint8_t *)data->d_buf + desc_offset,
			       header.n_descsz);
			id->size = header.n_descsz;
			return true;
		}
		offset = next;
	}
	return false;
}

static bool build_id_from_sections(Elf *elf, struct build_id *id)
{
	Elf_Scn *section = NULL;
	GElf_Shdr header;

	while ((section = elf_nextscn(elf, section))) {
		Elf_Data *data;

		if (!gelf_getshdr(section, &header) || header.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(section, NULL);
		if (data && data->d_buf && build_id_from_notes(data, id))
			return true;
	}
	return false;
}

static bool build_id_from_segments(Elf *elf, struct build_id *id)
{
	size_t count;
	GElf_Phdr header;

	if (elf_getphdrnum(elf, &count) != 0)
		return false;
	for (size_t i = 0; i < count; i++) {
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &header) || header.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)header.p_offset, header.p_filesz,
					    ELF_T_NHDR);
		if (data && build_id_from_notes(data, id))
			return true;
	}
	return false;
}

bool build_id_read(Elf *elf, struct build_id *id)
{
	id->size = 0;
	return build_id_from_sections(elf, id) || build_id_from_segments(elf, id);
}

bool build_id_equal(const struct build_id *a, const struct build_id *b)
{
	return a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

void build_id_to_hex(const struct build_id *id, char hex[BUILD_ID_HEX_MAX])
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < id->size; i++) {
		hex[2 * i] = digits[id->bytes[i] >> 4];
		hex[2 * i + 1] = digits[id->bytes[i] & 15];
	}
	hex[2 * id->size] = '\0';
}

bool debuglink_parse(const uint8_t *bytes, size_t size, bool big_endian, struct debuglink *link)
{
	const uint8_t *end = memchr(bytes, '\0', size);
	size_t name_length, crc_offset;
	const uint8_t *crc;

	if (!end)
		return false;
	name_length = (size_t)(end - bytes);
	crc_offset = (name_length + 1 + 3) & ~(size_t)3;
	if (name_length == 0 || name_length >= DEBUGLINK_NAME_MAX || crc_offset + 4 > size ||
	    memchr(bytes, '/', name_length) || strcmp((const char *)bytes, ".") == 0 ||
	    strcmp((const char *)bytes, "..") == 0)
		return false;
	memcpy(link->name, bytes, name_length + 1);
	crc = bytes + crc_offset;
	link->crc =
	    big_endian
		? (uint32_t)crc[0] << 24 | (uint32_t)crc[1] << 16 | (uint32_t)crc[2] << 8 | crc[3]
		: (uint32_t)crc[3] << 24 | (uint32_t)crc[2] << 16 | (uint32_t)crc[1] << 8 | crc[0];
	return true;
}

bool debuglink_read(Elf *elf, struct debuglink *link)
{
	Elf_Scn *section = NULL;
	GElf_Ehdr elf_header;
	GElf_Shdr header;
	size_t names_index;

	link->name[0] = '\0';
	if (!gelf_getehdr(elf, &elf_header) || elf_getshdrstrndx(elf, &names_index) != 0)
		return false;
	while ((section = elf_nextscn(elf, section))) {
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(section, &header) || header.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, names_index, header.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink") != 0)
			continue;
		data = elf_rawdata(section, NULL);
		return data && data->d_buf &&
		       debuglink_parse(data->d_buf, data->d_size,
				       elf_header.e_ident[EI_DATA] == ELFDATA2MSB, link);
	}
	return false;
}

bool debuglink_crc_of_file(int fd, uint32_t *crc)
{
	uint8_t buffer[65536];
	uLong value = crc32(0, Z_NULL, 0);
	off_t offset = 0;
	ssize_t n;

	while ((n = pread(fd, buffer, sizeof(buffer), offset)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		value = crc32(value, buffer, (uInt)n);
		offset += n;
	}
	*crc = (uint32_t)value;
	return true;
}
