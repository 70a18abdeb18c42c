/* Readable names for mangled C++ (and Rust) symbols, and for the methods
 * of .NET apps compiled ahead of time (NativeAOT, native_aot_name.h). */
#ifndef PROFCPU_DEMANGLE_H
#define PROFCPU_DEMANGLE_H

/* How the symbols of a module are mangled: as C, C++ and Rust compilers do,
 * or as in a NativeAOT executable, whose runtime parts are C++. */
enum mangling { MANGLING_NATIVE, MANGLING_NATIVE_AOT };

/* Returns the demangled form of `name` (malloc'd, the caller frees it), or
 * NULL when `name` is not mangled or does not demangle. */
char *demangle(const char *name, enum mangling mangling);

#endif
