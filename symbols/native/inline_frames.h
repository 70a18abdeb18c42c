/* Inlined calls at an address, from the DWARF (.debug_info) of a module. */
#ifndef PROFCPU_INLINE_FRAMES_H
#define PROFCPU_INLINE_FRAMES_H

#include "demangle.h"
#include "dwarf_units.h"
#include "native_frame.h"

#include <stddef.h>
#include <stdint.h>

struct inline_frames;

/* Inlined frames of `units`, which must outlive them, named as `mangling`
 * says the module's names are mangled. */
struct inline_frames *inline_frames_new(struct dwarf_units *units, enum mangling mangling);
void inline_frames_free(struct inline_frames *frames);

/* Fills up to `max` frames with the inlined calls holding `address`,
 * innermost first, each marked inlined, with the address' offset from the
 * start of the inlined range, and returns how many. `line` holds the
 * address' own line (line_table.h), which the innermost frame takes; each
 * next frame takes the line of the call inlined into it, and `line` is left
 * with the line of the outermost call, in the function holding them all.
 * Names are owned by `inlines`. */
size_t inline_frames_find(struct inline_frames *inlines, uint64_t address,
			  struct native_frame *frames, size_t max, struct source_line *line);

#endif
