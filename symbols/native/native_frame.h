/* One frame of native code as the native readers name it: the function a
 * symbol table or DWARF gives for an address, the offset into it, and the
 * source line it was at. */
#ifndef PROFCPU_NATIVE_FRAME_H
#define PROFCPU_NATIVE_FRAME_H

#include "source_line.h"

#include <stdbool.h>
#include <stdint.h>

/* Strings are owned by the reader that filled the frame. */
struct native_frame {
	const char *function; /* demangled name; NULL when nothing names it */
	uint64_t offset;      /* from the function's start */
	bool inlined;	      /* an inlined call inside the next frame */
	/* Where in the function the address is: the line table's line for
	 * the innermost frame, the line of the call inlined there for a frame
	 * that holds one. */
	struct source_line line;
};

#endif
