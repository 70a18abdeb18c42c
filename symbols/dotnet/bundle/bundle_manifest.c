#include "bundle_manifest.h"
#include "little_endian.h"
#include "target_file.h"
#include "target_root.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* SHA-256 of ".net core bundle\n": the marker's signature. */
static const uint8_t bundle_signature[32] = {
    0x8b, 0x12, 0x02, 0xb9, 0x6a, 0x61, 0x20, 0x38, 0x72, 0x7b, 0x93, 0x02, 0x14, 0xd7, 0xa0, 0x32,
    0x13, 0xf5, 0xb9, 0xe6, 0xef, 0xae, 0x33, 0x18, 0xee, 0x3b, 0x2d, 0xce, 0x24, 0xb3, 0x6a, 0xae,
};

/* The host's writable data holding the marker is a few hundred KiB
 * (.NET 10's singlefilehost: 230 and 160 KiB): its segments are read this
 * far only, all together. */
#define MAX_SCANNED_DATA (8u << 20)
#define MAX_PATH_LENGTH	 4096
/* A compressed file is inflated only when it claims at most this many
 * times its compressed bytes (inflates_too_much()); smaller than
 * SMALL_FILE_BYTES / MAX_INFLATION compressed, up to SMALL_FILE_BYTES. */
#define MAX_INFLATION	 16
#define SMALL_FILE_BYTES 4096

struct cursor {
	const uint8_t *at, *end;
	bool failed;
};

static const uint8_t *take(struct cursor *cursor, size_t length)
{
	const uint8_t *taken = cursor->at;

	if (cursor->failed || (size_t)(cursor->end - cursor->at) < length) {
		cursor->failed = true;
		return NULL;
	}
	cursor->at += length;
	return taken;
}

static uint64_t take_u64(struct cursor *cursor)
{
	const uint8_t *bytes = take(cursor, 8);

	return bytes ? read_u64(bytes) : 0;
}

/* A length-prefixed string: 7 bits a byte, at most two bytes, 1 to
 * MAX_PATH_LENGTH bytes long. Returns its bytes, with its length. */
static const uint8_t *take_string(struct cursor *cursor, size_t *length)
{
	const uint8_t *first = take(cursor, 1), *second;

	if (!first)
		return NULL;
	*length = *first & 0x7f;
	if (*first & 0x80) {
		if (!(second = take(cursor, 1)) || *second & 0x80) {
			cursor->failed = true;
			return NULL;
		}
		*length |= (size_t)*second << 7;
	}
	if (*length == 0 || *length > MAX_PATH_LENGTH) {
		cursor->failed = true;
		return NULL;
	}
	return take(cursor, *length);
}

void bundle_manifest_free(struct bundle_manifest *manifest)
{
	for (size_t i = 0; i < manifest->count; i++)
		free(manifest->entries[i].path);
	free(manifest->entries);
	*manifest = (struct bundle_manifest){0};
}

bool bundle_manifest_parse(const uint8_t *bytes, size_t size, uint64_t file_size,
			   struct bundle_manifest *manifest)
{
	struct cursor cursor = {bytes, bytes + size, false};
	const uint8_t *fixed = take(&cursor, 12);
	size_t length;
	int32_t count;

	*manifest = (struct bundle_manifest){0};
	if (!fixed)
		return false;
	manifest->major_version = read_u32(fixed);
	manifest->minor_version = read_u32(fixed + 4);
	count = (int32_t)read_u32(fixed + 8);
	if (manifest->major_version < 2 || manifest->major_version > 6 || count <= 0 ||
	    count > BUNDLE_MAX_FILES || !take_string(&cursor, &length) ||
	    !take(&cursor, 5 * 8) || /* deps.json, runtimeconfig.json, flags */
	    !(manifest->entries = calloc((size_t)count, sizeof(*manifest->entries))))
		return false;
	for (int32_t i = 0; i < count && !cursor.failed; i++) {
		struct bundle_entry entry = {0};
		const uint8_t *type, *path;

		entry.offset = take_u64(&cursor);
		entry.size = take_u64(&cursor);
		if (manifest->major_version >= 6)
			entry.compressed_size = take_u64(&cursor);
		type = take(&cursor, 1);
		path = take_string(&cursor, &length);
		/* Signed in the format: a negative one reads as huge here. */
		if (!path || entry.offset == 0 || entry.offset > file_size ||
		    (entry.compressed_size ? entry.compressed_size : entry.size) >
			file_size - entry.offset ||
		    memchr(path, '\0', length) ||
		    !(entry.path = strndup((const char *)path, length))) {
			cursor.failed = true;
			break;
		}
		entry.type = *type;
		manifest->entries[manifest->count++] = entry;
	}
	if (cursor.failed) {
		bundle_manifest_free(manifest);
		return false;
	}
	return true;
}

/* The bytes at `offset` of `fd`, all of them or false. */
static bool read_exactly(int fd, void *bytes, size_t length, uint64_t offset)
{
	while (length) {
		ssize_t got = pread(fd, bytes, length, (off_t)offset);

		if (got <= 0)
			return false;
		bytes = (uint8_t *)bytes + got;
		length -= (size_t)got;
		offset += (uint64_t)got;
	}
	return true;
}

/* The manifest's offset from the marker in the segment at `offset` of
 * `size` bytes, or 0. */
static uint64_t find_marker(int fd, uint64_t offset, uint64_t size)
{
	uint64_t header_offset = 0;
	uint8_t *bytes;

	if (size < 8 + sizeof(bundle_signature) || !(bytes = malloc(size)))
		return 0;
	if (read_exactly(fd, bytes, size, offset))
		for (size_t i = 8; i + sizeof(bundle_signature) <= size; i++)
			if (bytes[i] == bundle_signature[0] &&
			    !memcmp(bytes + i, bundle_signature, sizeof(bundle_signature))) {
				header_offset = read_u64(bytes + i - 8);
				break;
			}
	free(bytes);
	return header_offset;
}

/* The manifest's offset, from the marker in a writable PT_LOAD segment of
 * the ELF executable `fd`; 0 when there is none (an apphost that is not a
 * bundle has 0 there too). */
static uint64_t manifest_offset(int fd)
{
	Elf64_Ehdr header;
	Elf64_Phdr segments[64];
	uint64_t found = 0, scanned = 0;

	if (!read_exactly(fd, &header, sizeof(header), 0) ||
	    memcmp(header.e_ident, ELFMAG, SELFMAG) || header.e_ident[EI_CLASS] != ELFCLASS64 ||
	    header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_phentsize != sizeof(Elf64_Phdr) ||
	    header.e_phnum == 0 || header.e_phnum > sizeof(segments) / sizeof(*segments) ||
	    !read_exactly(fd, segments, header.e_phnum * sizeof(Elf64_Phdr), header.e_phoff))
		return 0;
	for (size_t i = 0; i < header.e_phnum && !found && scanned < MAX_SCANNED_DATA; i++)
		if (segments[i].p_type == PT_LOAD && segments[i].p_flags & PF_W) {
			uint64_t size = segments[i].p_filesz < MAX_SCANNED_DATA - scanned
					    ? segments[i].p_filesz
					    : MAX_SCANNED_DATA - scanned;

			found = find_marker(fd, segments[i].p_offset, size);
			scanned += size;
		}
	return found;
}

bool bundle_manifest_read(int fd, struct bundle_manifest *manifest)
{
	uint64_t offset = manifest_offset(fd), size;
	struct stat status;
	uint8_t *bytes;
	bool parsed;

	*manifest = (struct bundle_manifest){0};
	if (!offset || fstat(fd, &status) != 0 || offset >= (uint64_t)status.st_size)
		return false;
	size = (uint64_t)status.st_size - offset;
	if (size > BUNDLE_MAX_MANIFEST)
		size = BUNDLE_MAX_MANIFEST;
	if (!(bytes = malloc(size)))
		return false;
	parsed = read_exactly(fd, bytes, size, offset) &&
		 bundle_manifest_parse(bytes, size, (uint64_t)status.st_size, manifest);
	free(bytes);
	return parsed;
}

const struct bundle_entry *bundle_manifest_assembly_at(const struct bundle_manifest *manifest,
						       uint64_t file_offset)
{
	for (size_t i = 0; i < manifest->count; i++) {
		const struct bundle_entry *entry = &manifest->entries[i];

		if (entry->type == BUNDLE_TYPE_ASSEMBLY && !entry->compressed_size &&
		    file_offset >= entry->offset && file_offset - entry->offset < entry->size)
			return entry;
	}
	return NULL;
}

/* Inflates the `compressed` bytes of a raw deflate stream at `offset` of
 * `fd` into the `size` bytes of `out`: true when they filled all of it.
 * A deflate stream codes a byte in at most 15 bits, and each block adds a
 * header of a few hundred bytes: a real one gives `size` bytes from fewer
 * than twice as many and 4 KiB. Past that the stream is read no further
 * (empty stored blocks, 5 bytes each, give no byte at all). */
static bool inflate_from(int fd, uint64_t offset, uint64_t compressed, uint8_t *out, size_t size)
{
	uint8_t chunk[64 * 1024];
	z_stream stream = {.next_out = out};
	int status = Z_OK;

	if (size < UINT64_MAX / 4 && compressed > 2 * (uint64_t)size + 4096)
		compressed = 2 * (uint64_t)size + 4096;
	if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
		return false;
	while (status == Z_OK && size) {
		size_t length = compressed < sizeof(chunk) ? (size_t)compressed : sizeof(chunk);
		/* zlib counts in uInt: at most 1 GiB out per call. */
		uInt room = size < (1u << 30) ? (uInt)size : 1u << 30;

		if (stream.avail_in == 0) {
			if (length == 0 || !read_exactly(fd, chunk, length, offset))
				break;
			stream.next_in = chunk;
			stream.avail_in = (uInt)length;
			offset += length;
			compressed -= length;
		}
		stream.avail_out = room;
		status = inflate(&stream, Z_NO_FLUSH);
		size -= room - stream.avail_out;
	}
	inflateEnd(&stream);
	return size == 0;
}

/* Whether `entry` claims more bytes than any real assembly inflates to from
 * its compressed ones: deflate gives an assembly from a third of its bytes
 * or so (3.06 times at most in .NET 10's framework); a bomb gives a
 * thousand times as many, all of them the profiler's memory. */
static bool inflates_too_much(const struct bundle_entry *entry)
{
	return entry->compressed_size &&
	       entry->size / MAX_INFLATION > entry->compressed_size + SMALL_FILE_BYTES;
}

uint8_t *bundle_entry_read(int fd, const struct bundle_entry *entry, uint64_t limit, size_t *size)
{
	uint64_t length = entry->size < limit ? entry->size : limit;
	uint8_t *bytes;
	bool read;

	if (length == 0 || length > SIZE_MAX || inflates_too_much(entry) ||
	    !(bytes = malloc((size_t)length)))
		return NULL;
	if (entry->compressed_size)
		read =
		    inflate_from(fd, entry->offset, entry->compressed_size, bytes, (size_t)length);
	else
		read = read_exactly(fd, bytes, (size_t)length, entry->offset);
	if (!read) {
		free(bytes);
		return NULL;
	}
	*size = (size_t)length;
	return bytes;
}

/* NAME's bytes, for bundle_read_inner(), from the executable open on `fd`
 * whose path is `executable`. */
static uint8_t *read_inner(int fd, const char *executable, const char *name, uint64_t limit,
			   size_t *size, char *runtime_path, size_t runtime_size)
{
	const char *folder_end = strrchr(executable, '/');
	struct bundle_manifest manifest;
	const struct bundle_entry *entry;
	uint8_t *bytes = NULL;

	if (!folder_end || !bundle_manifest_read(fd, &manifest))
		return NULL;
	if ((entry = bundle_manifest_find(&manifest, name)) &&
	    snprintf(runtime_path, runtime_size, "%.*s/%s", (int)(folder_end - executable),
		     executable, name) < (int)runtime_size)
		bytes = bundle_entry_read(fd, entry, limit, size);
	bundle_manifest_free(&manifest);
	return bytes;
}

uint8_t *bundle_read_inner(int root_fd, const char *path, uint64_t limit, size_t *size,
			   char *runtime_path, size_t runtime_size)
{
	char *executable = strdup(path), *slash;
	uint8_t *bytes = NULL;
	int fd;

	while (executable && (slash = strrchr(executable, '/')) && slash != executable) {
		*slash = '\0';
		if ((fd = target_file_open(root_fd, executable, 0)) < 0)
			continue;
		bytes = read_inner(fd, executable, path + (slash - executable) + 1, limit, size,
				   runtime_path, runtime_size);
		close(fd);
		break;
	}
	free(executable);
	return bytes;
}

const struct bundle_entry *bundle_manifest_find(const struct bundle_manifest *manifest,
						const char *path)
{
	for (size_t i = 0; i < manifest->count; i++)
		if (!strcmp(manifest->entries[i].path, path))
			return &manifest->entries[i];
	return NULL;
}

/* Whether the bundle open on `fd` stores the file `name`. */
static bool stores(int fd, const char *name)
{
	struct bundle_manifest manifest;
	bool found;

	if (!bundle_manifest_read(fd, &manifest))
		return false;
	found = bundle_manifest_find(&manifest, name) != NULL;
	bundle_manifest_free(&manifest);
	return found;
}

bool bundle_find_storing(int root_fd, const char *path, char *inside, size_t size)
{
	const char *slash = strrchr(path, '/');
	char folder[PATH_MAX], neighbour[PATH_MAX];
	struct dirent *entry;
	int fd, listed = 0, folder_fd;
	bool found = false;
	DIR *directory;

	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(folder))
		return false;
	snprintf(folder, sizeof(folder), "%.*s", (int)(slash - path), path);
	if ((folder_fd = target_root_openat(root_fd, folder, O_RDONLY | O_DIRECTORY)) < 0)
		return false;
	if (!(directory = fdopendir(folder_fd))) {
		close(folder_fd);
		return false;
	}
	while (!found && listed++ < BUNDLE_MAX_NEIGHBOURS && (entry = readdir(directory))) {
		if (entry->d_name[0] == '.' ||
		    snprintf(neighbour, sizeof(neighbour), "%s/%s", folder, entry->d_name) >=
			(int)sizeof(neighbour) ||
		    (fd = target_file_open(root_fd, neighbour, 0)) < 0)
			continue;
		found = stores(fd, slash + 1) &&
			snprintf(inside, size, "%s/%s", neighbour, slash + 1) < (int)size;
		close(fd);
	}
	closedir(directory);
	return found;
}
