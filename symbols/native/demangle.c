/* libiberty's cplus_demangle rather than libstdc++'s __cxa_demangle: it is
 * a C interface with a C header (no C++ runtime linked into a C program),
 * it keeps its recursion limit on for hostile names, it also reads Rust
 * symbols, and it is the demangler binutils uses, so names match what
 * addr2line -C and perf print. */
#include "demangle.h"
#include "native_aot_name.h"

#include <libiberty/demangle.h>
#include <stddef.h>

char *demangle(const char *name, enum mangling mangling)
{
	/* Only Itanium C++ ("_Z") and Rust v0 ("_R") names are mangled; skip the
	 * demangler's work for the plain C names that are most symbols. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return mangling == MANGLING_NATIVE_AOT ? native_aot_name(name) : NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}
