/* The .NET assemblies a capture's frames fall in, read once each: names
 * precompiled (ReadyToRun) code from the images themselves, for targets
 * whose runtime tells nothing (no diagnostics IPC, no jitdump).
 *
 * Images are cached by path; a file seen at another path with the same
 * build identity (COFF timestamp, MVID, size) is read once. A single-file
 * app's executable is no assembly but stores them (bundle_manifest.h): an
 * offset in it names the code of the assembly stored there, read from the
 * executable and cached as EXECUTABLE/NAME, where the assemblies of its
 * version bubble are found too. Types that a
 * signature borrows from another assembly of the version bubble are read
 * from that assembly's file in the same folder. */
#ifndef PROFCPU_MANAGED_IMAGES_H
#define PROFCPU_MANAGED_IMAGES_H

#include "managed_image.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct managed_images;

/* Files are opened inside `root_fd` (target_root.h; -1: own files), which
 * must stay open until managed_images_free(). */
struct managed_images *managed_images_new(int root_fd);
void managed_images_free(struct managed_images *images);

/* The image at `path`, read on the first call; NULL when it is not a .NET
 * assembly (remembered: it is not read again). */
struct managed_image *managed_images_get(struct managed_images *images, const char *path);

/* Names the precompiled method at `file_offset` in the assembly at `path`
 * (managed_image_lookup). */
bool managed_images_lookup(struct managed_images *images, const char *path, uint64_t file_offset,
			   const char **name, uint64_t *offset);

/* The assembly whose PDB holds the lines of the precompiled code at
 * `file_offset` in the image at `path`: `path` itself, or for code of a
 * composite image's component, that assembly's file beside it. Written to
 * `assembly` (`size` bytes); false when it does not fit. */
bool managed_images_lines_assembly(struct managed_images *images, const char *path,
				   uint64_t file_offset, char *assembly, size_t size);

/* The method and IL offset of the precompiled code at `file_offset` in the
 * image at `path` (managed_image_il_offset), for its source line in the
 * assembly managed_images_lines_assembly() names (managed_lines_lookup_il). */
bool managed_images_il_offset(struct managed_images *images, const char *path, uint64_t file_offset,
			      uint32_t *method_token, uint32_t *il_offset);

/* How to unwind through the precompiled code at `file_offset` of the file
 * at `path`, an assembly or a single-file app's executable that stores one
 * there (managed_image_unwind_at). */
bool managed_images_unwind_at(struct managed_images *images, const char *path, uint64_t file_offset,
			      struct windows_unwind_code_at *unwind);

/* Writes one line to `log` (symbols_log): how many images with ReadyToRun
 * code were read and how many lookups they answered. Nothing when no
 * lookup was made or `images` is NULL. */
void managed_images_report(const struct managed_images *images, FILE *log);

#endif
