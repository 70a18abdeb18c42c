/* Inlined calls at an address, from the DWARF (.debug_info) of a module. */
#ifndef PROFCPU_INLINE_FRAMES_H
#define PROFCPU_INLINE_FRAMES_H

#include "elf_file.h"
#include "native_frame.h"

#include <stddef.h>
#include <stdint.h>

struct inline_frames;

/* Reads DWARF from `file`, taking ownership of it. Returns NULL (and closes
 * `file`) when it has no usable DWARF. */
struct inline_frames *inline_frames_open(struct elf_file *file);
void inline_frames_free(struct inline_frames *frames);

/* Fills up to `max` frames with the inlined calls holding `address`,
 * innermost first, each marked inlined, with the address' offset from the
 * start of the inlined range. Names are owned by `inlines`. Returns how
 * many. */
size_t inline_frames_find(struct inline_frames *inlines, uint64_t address,
			  struct native_frame *frames, size_t max);

#endif
