/* The generic arguments of a type the runtime loaded, read from its memory
 * as its RuntimeTypeSystem contract (version 1) describes them, and written
 * as its perf map writes them after the type's name:
 * "[System.__Canon,System.Int32]" for the code Dictionary<string,int> and
 * Dictionary<object,int> share, "[System.ValueTuple`2[System.__Canon,
 * Microsoft.Interop.EnvironmentFlags]]" for a nested instantiation.
 *
 * A MethodTable's flags say whether it has an instantiation (MTFlags'
 * GenericsMask) and its TypeDef row (MTFlags2's upper bits); its
 * PerInstInfo points to its dictionaries, one per generic type of its
 * hierarchy, its own the last, preceded by a GenericsDictInfo giving their
 * number and its own arguments' count; the first pointers of its dictionary
 * are its arguments' type handles. An argument is named by its module's
 * metadata (the caller's namer) and, when it is generic itself, its own
 * arguments; a single-dimensional array by its element type and "[]".
 *
 * The memory is hostile: types are followed 8 levels deep and 64 in all,
 * a type has at most 64 arguments, the text is bounded by the caller's
 * buffer, and whatever is not a MethodTable of those shapes (a TypeDesc: a
 * type variable, a pointer; a multi-dimensional array; a count out of
 * bounds; a read that fails) makes the whole answer false, for the caller
 * to fall back on the definition's name rather than name it wrongly. */
#ifndef PROFCPU_GENERIC_ARGUMENTS_H
#define PROFCPU_GENERIC_ARGUMENTS_H

#include "contract_descriptor.h"
#include "target_memory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct generic_arguments;

/* Writes into `name` (`size` bytes) the reflection-style name of TypeDef
 * row `row` ("System.Int32", "Outer`1+Inner") of the module at the
 * target's `module`; false when it cannot be had. */
typedef bool (*generic_arguments_namer)(void *context, struct target_memory *memory,
					uint64_t module, uint32_t row, char *name, size_t size);

/* The offsets the walk needs, from `descriptor`. NULL, with the reason in
 * `error`, when it lacks one. */
struct generic_arguments *generic_arguments_new(const struct contract_descriptor *descriptor,
						char *error, size_t error_size);
void generic_arguments_free(struct generic_arguments *arguments);

/* The generic arguments of the type whose MethodTable is at
 * `method_table`, into `text` (`size` bytes): "" for a type that has
 * none, and its TypeDef row in `row`. False when the memory does not give
 * them whole, or they do not fit. */
bool generic_arguments_write(const struct generic_arguments *arguments,
			     struct target_memory *memory, uint64_t method_table,
			     generic_arguments_namer namer, void *context, uint32_t *row,
			     char *text, size_t size);

#endif
