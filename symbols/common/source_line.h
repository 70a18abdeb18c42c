/* A line of a source file, as debug information names it (DWARF for
 * native code, a portable PDB for .NET code). */
#ifndef PROFCPU_SOURCE_LINE_H
#define PROFCPU_SOURCE_LINE_H

#include <stdint.h>

/* file NULL (and number 0) when nothing says. */
struct source_line {
	const char *file; /* the path the compiler saw */
	uint32_t number;
};

#endif
