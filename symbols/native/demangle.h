/* Readable names for mangled C++ (and Rust) symbols. */
#ifndef PROFCPU_DEMANGLE_H
#define PROFCPU_DEMANGLE_H

/* Returns the demangled form of `name` (malloc'd, the caller frees it), or
 * NULL when `name` is not mangled or does not demangle. */
char *demangle(const char *name);

#endif
