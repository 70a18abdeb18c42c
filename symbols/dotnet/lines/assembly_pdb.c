#include "assembly_pdb.h"
#include "bundle_manifest.h"
#include "buffer.h"
#include "little_endian.h"
#include "pe_image.h"
#include "sparse_file.h"
#include "target_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#define PE_DIRECTORY_DEBUG  6
#define DEBUG_ENTRY_SIZE    28
#define MAX_DEBUG_ENTRIES   32
#define DEBUG_TYPE_CODEVIEW 2
#define DEBUG_TYPE_EMBEDDED 17
#define CODEVIEW_SIGNATURE  0x53445352 /* "RSDS" */
#define EMBEDDED_SIGNATURE  0x4244504d /* "MPDB" */
#define PDB_READ_SECONDS    5.0

/* What an assembly's debug directory says of its PDB. */
struct debug_directory {
	bool has_id;
	uint8_t id[PORTABLE_PDB_ID_SIZE]; /* the CodeView entry's GUID and stamp */
	const uint8_t *embedded;	  /* "MPDB", its size, the deflated PDB */
	uint32_t embedded_size;
};

static bool load_range(void *context, uint64_t file_offset, uint64_t length)
{
	return sparse_file_load(context, file_offset, length);
}

static void read_debug_directory(const struct pe_image *pe, struct debug_directory *directory)
{
	uint32_t rva, size;
	const uint8_t *entries;

	if (!pe_image_directory(pe, PE_DIRECTORY_DEBUG, &rva, &size))
		return;
	size = size / DEBUG_ENTRY_SIZE < MAX_DEBUG_ENTRIES ? size
							   : MAX_DEBUG_ENTRIES * DEBUG_ENTRY_SIZE;
	if (!(entries = pe_image_at_rva(pe, rva, size)))
		return;
	for (uint32_t offset = 0; offset + DEBUG_ENTRY_SIZE <= size; offset += DEBUG_ENTRY_SIZE) {
		const uint8_t *entry = entries + offset;
		uint32_t type = read_u32(entry + 12), data_size = read_u32(entry + 16);
		const uint8_t *data = pe_image_at_rva(pe, read_u32(entry + 20), data_size);

		if (!data)
			continue;
		if (type == DEBUG_TYPE_CODEVIEW && data_size >= 24 &&
		    read_u32(data) == CODEVIEW_SIGNATURE) {
			memcpy(directory->id, data + 4, 16);
			memcpy(directory->id + 16, entry + 4, 4); /* the entry's TimeDateStamp */
			directory->has_id = true;
		} else if (type == DEBUG_TYPE_EMBEDDED && data_size >= 8 &&
			   read_u32(data) == EMBEDDED_SIGNATURE) {
			directory->embedded = data;
			directory->embedded_size = data_size;
		}
	}
}

/* Inflates an embedded PDB (raw deflate after "MPDB" and its size). */
static struct portable_pdb *inflate_embedded(const struct debug_directory *directory, char *why,
					     size_t why_size)
{
	uint32_t size = read_u32(directory->embedded + 4);
	z_stream stream = {.next_in = (Bytef *)directory->embedded + 8,
			   .avail_in = directory->embedded_size - 8};
	uint8_t *data;
	int status;

	if (size == 0 || size > ASSEMBLY_PDB_MAX_SIZE) {
		snprintf(why, why_size, "its embedded PDB claims %u bytes", size);
		return NULL;
	}
	if (!(data = malloc(size)) || inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
		free(data);
		snprintf(why, why_size, "no memory for its embedded PDB");
		return NULL;
	}
	stream.next_out = data;
	stream.avail_out = size;
	status = inflate(&stream, Z_FINISH);
	inflateEnd(&stream);
	if (status != Z_STREAM_END || stream.avail_out != 0) {
		free(data);
		snprintf(why, why_size, "its embedded PDB is damaged (it does not inflate)");
		return NULL;
	}
	return portable_pdb_parse(data, size, why, why_size);
}

struct growing_bytes {
	uint8_t *bytes;
	size_t length, capacity;
	bool failed;
};

static void keep_bytes(const char *bytes, size_t length, void *context)
{
	struct growing_bytes *kept = context;

	if (kept->failed ||
	    !buffer_reserve((void **)&kept->bytes, &kept->capacity, kept->length + length, 1)) {
		kept->failed = true;
		return;
	}
	memcpy(kept->bytes + kept->length, bytes, length);
	kept->length += length;
}

/* The .pdb beside the assembly, when it is the one the assembly names. */
static struct portable_pdb *read_beside(int root_fd, const char *path,
					const struct debug_directory *directory, char *why,
					size_t why_size)
{
	size_t length = strlen(path);
	char *pdb_path = malloc(length + 5);
	struct target_file_budget budget = {.max_bytes = ASSEMBLY_PDB_MAX_SIZE,
					    .max_seconds = PDB_READ_SECONDS};
	struct growing_bytes kept = {0};
	struct portable_pdb *pdb = NULL;
	uint8_t id[PORTABLE_PDB_ID_SIZE];
	int fd;

	if (!pdb_path)
		return NULL;
	memcpy(pdb_path, path, length + 1);
	if (length > 4 &&
	    (!strcasecmp(path + length - 4, ".dll") || !strcasecmp(path + length - 4, ".exe")))
		length -= 4;
	strcpy(pdb_path + length, ".pdb");
	if ((fd = target_file_open(root_fd, pdb_path, 0)) < 0) {
		snprintf(why, why_size, "no PDB embedded and none beside it (%s: %s)", pdb_path,
			 strerror(errno));
	} else if (target_file_read(fd, &budget, keep_bytes, &kept) < 0 || kept.failed) {
		snprintf(why, why_size, "%s cannot be read (%s)", pdb_path,
			 kept.failed ? "no memory" : strerror(errno));
	} else if (budget.stopped_by) {
		snprintf(why, why_size, "%s was not read whole: %s", pdb_path, budget.stopped_by);
	} else if ((pdb = portable_pdb_parse(kept.bytes, kept.length, why, why_size))) {
		kept.bytes = NULL; /* the PDB's now */
		portable_pdb_id(pdb, id);
		if (memcmp(id, directory->id, sizeof(id))) {
			snprintf(why, why_size,
				 "%s is of another build (its id is not the one the "
				 "assembly names)",
				 pdb_path);
			portable_pdb_free(pdb);
			pdb = NULL;
		}
	} else {
		kept.bytes = NULL; /* freed by the parse */
		length = strlen(why);
		snprintf(why + length, why_size - length, " (%s)", pdb_path);
	}
	if (fd >= 0)
		close(fd);
	free(kept.bytes);
	free(pdb_path);
	return pdb;
}

/* The PDB of the assembly whose headers `pe` reads: embedded, or beside
 * it at `path`. */
static struct portable_pdb *read_pdb(int root_fd, const char *path, const struct pe_image *pe,
				     char *why, size_t why_size)
{
	struct debug_directory directory = {0};

	read_debug_directory(pe, &directory);
	if (directory.embedded)
		return inflate_embedded(&directory, why, why_size);
	if (!directory.has_id) {
		snprintf(why, why_size,
			 "the assembly names no PDB (built without debug "
			 "information)");
		return NULL;
	}
	return read_beside(root_fd, path, &directory, why, why_size);
}

/* The PDB of the assembly at `inside`, "EXECUTABLE/NAME", which a
 * single-file app stores, compressed or not: NAME read from inside the
 * app, its PDB embedded in it or beside the app. */
static struct portable_pdb *open_inside(int root_fd, const char *inside, char *why, size_t why_size)
{
	char runtime_path[PATH_MAX];
	struct portable_pdb *pdb = NULL;
	struct pe_image pe;
	uint8_t *bytes;
	size_t size;

	if (!(bytes = bundle_read_inner(root_fd, inside, MANAGED_IMAGE_MAX_SIZE, &size,
					runtime_path, sizeof(runtime_path)))) {
		snprintf(why, why_size,
			 "the assembly cannot be read (no file at its path, nor stored in a "
			 "single-file app)");
		return NULL;
	}
	if (!pe_image_parse(&pe, bytes, size, NULL))
		snprintf(why, why_size, "the assembly is not a PE file");
	else
		pdb = read_pdb(root_fd, runtime_path, &pe, why, why_size);
	free(bytes);
	return pdb;
}

struct portable_pdb *assembly_pdb_open(int root_fd, const char *path, char *why, size_t why_size)
{
	struct portable_pdb *pdb = NULL;
	struct sparse_file file;
	struct pe_image pe;
	struct pe_loader loader = {load_range, &file};
	char inside[PATH_MAX];

	errno = 0;
	if (!sparse_file_open(&file, target_file_open(root_fd, path, 0), MANAGED_IMAGE_MAX_SIZE)) {
		int reason = errno;

		/* EXECUTABLE/NAME: the capture's name for a stored assembly
		 * (managed_images.h). FOLDER/NAME, no file there: the
		 * runtime's, for one stored in an app in FOLDER. */
		if (reason == ENOTDIR)
			return open_inside(root_fd, path, why, why_size);
		if (reason == ENOENT && bundle_find_storing(root_fd, path, inside, sizeof(inside)))
			return open_inside(root_fd, inside, why, why_size);
		snprintf(why, why_size, "the assembly cannot be read (%s)",
			 reason ? strerror(reason) : "not a regular file, or too large");
		return NULL;
	}
	if (!pe_image_parse(&pe, file.bytes, file.size, &loader))
		snprintf(why, why_size, "the assembly is not a PE file");
	else
		pdb = read_pdb(root_fd, path, &pe, why, why_size);
	sparse_file_free(&file);
	return pdb;
}
