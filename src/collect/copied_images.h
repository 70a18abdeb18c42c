/* .NET images the runtime copied into anonymous memory instead of mapping
 * their file. It does so when it cannot map an image as the loader would
 * (a file it failed to map, DOTNET_PELoader_DisableMapping=1, an assembly
 * a single-file app stores compressed, which it inflates first): its
 * "converted" layout, a copy of each section at its RVA. The image's
 * precompiled (ReadyToRun) code then runs from anonymous mappings that
 * name no file, so neither the image's names for it nor its source lines
 * could be found.
 *
 * Such a mapping is described instead as what it holds: the bytes of the
 * image's file at known offsets, as if the file were mapped there. The copy
 * is recognised by its headers, read from the process's memory: a PE image
 * at a 64 KiB boundary at or below the mapping, the same build as one of
 * the process's mapped .dll files (the runtime keeps each file mapped flat,
 * from offset 0, beside the copy) or of the compressed assemblies its
 * executable's bundle manifest lists (bundle_manifest.h; their first page
 * inflated from the executable). Such an assembly's copy is described as
 * the file EXECUTABLE/NAME, which managed_images.h reads from the
 * executable. Reads are a page at a time and bounded in number, and the
 * readings of one process cost it at most a tenth of the sampler's CPU
 * time, of all processes a quarter, each second (a reading whose time ran
 * out goes on at the next): the process is hostile input, and the sampler
 * waits for them. */
#ifndef PROFCPU_COPIED_IMAGES_H
#define PROFCPU_COPIED_IMAGES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define COPIED_IMAGE_MAX_PARTS 16

/* A piece of an anonymous mapping that holds the file's bytes from
 * file_offset on, and the file as the process maps it. */
struct copied_image_part {
	uint64_t start, end, file_offset;
};

struct copied_image_file {
	char path[PATH_MAX];
	uint32_t major, minor;
	uint64_t inode;
};

/* Whether a mapping a record names `path` may hold a copy: anonymous
 * memory ("//anon", "[anon:NAME]"), or the runtime's double mapping of its
 * executable memory ("/memfd:doublemapper", with W^X on). */
bool copied_images_may_hold(const char *path);

/* What was read of one process's .dll files (their headers), kept between
 * calls for that process. */
struct copied_images;

struct copied_images *copied_images_new(void);
void copied_images_free(struct copied_images *images);

/* The parts of `pid`'s anonymous executable mapping [start, end) that hold
 * a copied image's file bytes, in address order, and that image's `file`.
 * Returns how many (at most COPIED_IMAGE_MAX_PARTS); 0 when the mapping
 * holds no copied image (or its memory cannot be read). */
size_t copied_images_parts(struct copied_images *images, pid_t pid, uint64_t start, uint64_t end,
			   struct copied_image_part *parts, struct copied_image_file *file);

#endif
