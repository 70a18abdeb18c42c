/* The manifest of a .NET single-file app (dotnet publish
 * -p:PublishSingleFile=true): the executable is the runtime's host with the
 * app's files appended, the framework's assemblies among them, and a
 * manifest after them that says where each file lies (dotnet/runtime
 * src/native/corehost/bundle, src/installer/managed/Microsoft.NET.HostModel/
 * Bundle).
 *
 * The host finds the manifest through its bundle marker, 8 bytes of the
 * manifest's offset followed by a fixed 32-byte signature, in its data. The
 * manifest, little endian:
 *
 *   uint32 major version (2: .NET 5, 6: .NET 6 and later), uint32 minor
 *   int32 number of files
 *   bundle id: a length (7 bits a byte, low first, at most 2 bytes), bytes
 *   version 2 and later: deps.json offset and size, runtimeconfig.json
 *     offset and size (int64 each), uint64 flags
 *   per file: int64 offset, int64 size, int64 compressed size (version 6
 *     and later; 0 when stored as it is), uint8 type (1: an assembly), its
 *     path relative to the app's folder (length as above, bytes)
 *
 * Offsets are from the start of the executable. A compressed file
 * (-p:EnableCompressionInSingleFile=true) holds its bytes deflated (raw
 * deflate, no zlib header), which the runtime inflates into memory when it
 * loads it. The executable is the target's file: everything in it is
 * checked and bounded. */
#ifndef PROFCPU_BUNDLE_MANIFEST_H
#define PROFCPU_BUNDLE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUNDLE_TYPE_ASSEMBLY 1
#define BUNDLE_MAX_FILES     65536
#define BUNDLE_MAX_MANIFEST  (16u << 20) /* bytes read for a manifest */

struct bundle_entry {
	uint64_t offset, size;
	uint64_t compressed_size; /* 0: stored as it is */
	uint8_t type;
	char *path; /* relative to the app's folder, '/'-separated */
};

struct bundle_manifest {
	uint32_t major_version, minor_version;
	struct bundle_entry *entries;
	size_t count;
};

/* Parses the manifest in `size` bytes (those from its offset on) of an
 * executable of `file_size` bytes: every file must lie inside it. False,
 * with `manifest` empty, when the bytes are not a manifest of a version
 * from 2 to 6. */
bool bundle_manifest_parse(const uint8_t *bytes, size_t size, uint64_t file_size,
			   struct bundle_manifest *manifest);
void bundle_manifest_free(struct bundle_manifest *manifest);

/* Reads the manifest of the executable open on `fd`: the bundle marker
 * looked for in its writable ELF segments, then the manifest. False when
 * it is not a single-file bundle. */
bool bundle_manifest_read(int fd, struct bundle_manifest *manifest);

/* The assembly stored as it is (not compressed) that holds the byte at
 * `file_offset` of the executable, or NULL. */
const struct bundle_entry *bundle_manifest_assembly_at(const struct bundle_manifest *manifest,
						       uint64_t file_offset);

/* The first `limit` bytes (all of them when it is smaller) of the file
 * `entry` of the executable open on `fd`, inflated when it is compressed:
 * malloc()ed, their number in `size`. NULL when they cannot be read, or a
 * compressed file's bytes inflate to fewer. */
uint8_t *bundle_entry_read(int fd, const struct bundle_entry *entry, uint64_t limit, size_t *size);

/* For `path` "EXECUTABLE/NAME" (as the target sees it, inside `root_fd`;
 * no file is there), EXECUTABLE a single-file app that stores NAME:
 * NAME's first `limit` bytes (bundle_entry_read()), and in `runtime_path`
 * (`runtime_size` bytes) the path the runtime gives it, NAME in
 * EXECUTABLE's folder. NULL when the nearest folder of `path` that is a
 * file is no such app. */
uint8_t *bundle_read_inner(int root_fd, const char *path, uint64_t limit, size_t *size,
			   char *runtime_path, size_t runtime_size);

/* The file whose relative path is `path`, or NULL. */
const struct bundle_entry *bundle_manifest_find(const struct bundle_manifest *manifest,
						const char *path);

/* The single-file app that stores the file at `path` (as the target sees
 * it, inside `root_fd`) when no file is there: the runtime names a stored
 * assembly by a path in the app's folder, compressed or not. Looks at the
 * first BUNDLE_MAX_NEIGHBOURS files of the folder. Writes
 * "FOLDER/EXECUTABLE/NAME" to `inside` (`size` bytes), the path
 * bundle_read_inner() reads; false when no app there stores NAME. */
#define BUNDLE_MAX_NEIGHBOURS 64
bool bundle_find_storing(int root_fd, const char *path, char *inside, size_t size);

#endif
