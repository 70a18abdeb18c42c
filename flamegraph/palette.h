/* Frame colours. The "dotnet" palette tells the kinds of code in a .NET
 * process apart by colour family, from the frame name alone:
 *
 *   managed (JIT) .NET  green   "RET [Assembly] Ns.Type::Method(args)[Tier]",
 *                               "[Assembly] Ns.Type::Method",
 *                               "Assembly!Ns.Type::Method", or a "_[j]" suffix
 *   inlined             aqua    a "_[i]" suffix
 *   runtime stubs       purple  "stub<N> ..." (code the runtime generates)
 *   native C++          yellow  "::" without an [Assembly] (libcoreclr.so's
 *                               functions, e.g. "MethodDesc::DoPrestub")
 *   native C            red     anything else ("dotnet", "__memmove_avx")
 *   kernel              orange  a "_[k]" suffix (as stackcollapse-perf.pl
 *                               writes with --kernel) or "[kernel.kallsyms]"
 *   module only         tan     "[libfoo.so]": native code without a symbol
 *   unknown             grey    "[unknown]"
 *
 * The _[k], _[j] and _[i] suffixes choose the family and are not shown.
 * Within a family the shade comes from a hash of the name, so the same name
 * always gets the same colour, in every graph. The other palettes (hot,
 * mem, io, red, green, ...) are single families, as in flamegraph.pl. */
#ifndef PROFCPU_PALETTE_H
#define PROFCPU_PALETTE_H

#include <stddef.h>
#include <stdint.h>

enum frame_kind {
	FRAME_MANAGED,
	FRAME_INLINED,
	FRAME_RUNTIME_STUB,
	FRAME_NATIVE_CPP,
	FRAME_NATIVE,
	FRAME_KERNEL,
	FRAME_MODULE_ONLY,
	FRAME_UNKNOWN,
};

struct rgb {
	uint8_t red, green, blue;
};

/* The kind of a frame, and the length of its name without the annotation
 * suffix ("_[k]" ...), which is what the graph shows. */
enum frame_kind frame_kind_of(const char *name, size_t length, size_t *display_length);

struct palette;

/* The palette called `name` (see flamegraph_palette_is_known), or NULL. */
const struct palette *palette_find(const char *name);

/* The colour of a frame: from its kind and a hash of its shown name. */
struct rgb palette_colour(const struct palette *palette, enum frame_kind kind, const char *name,
			  size_t length);

/* Differential colour: light grey when unchanged, red deepening with growth
 * and blue with shrinkage, relative to the largest change in the graph. */
struct rgb palette_change_colour(double before, double after, double largest_change);

#endif
