/* The runtime's name for a method of an assembly, from the assembly's own
 * metadata and the method's MethodDef token, written as the runtime writes
 * the names of JIT code in its perf map:
 *
 *   float64 [hotloop] Demo.Program::HotMethod(int32)
 *
 * for names found without the runtime's help (symbols/runtime_memory), which
 * then go through managed_name_readable() as the perf map's do. Generic
 * arguments are the runtime's and not in the metadata: a generic type is
 * written as its definition ("List`1"). */
#ifndef PROFCPU_METHOD_DEF_NAME_H
#define PROFCPU_METHOD_DEF_NAME_H

#include "managed_image.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the name of the method `token` (0x06......) of `image` into
 * `name` (`size` bytes, cut when longer). False when the token is no
 * MethodDef row of it. */
bool method_def_name(const struct managed_image *image, uint32_t token, char *name, size_t size);

#endif
