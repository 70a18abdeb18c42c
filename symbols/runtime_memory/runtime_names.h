/* Names of JIT code from the runtime's memory: the method code_map.h finds,
 * named from its module's metadata (managed_image_method_def_name), with
 * the generic arguments of its type's instantiation (generic_arguments.h;
 * the definition's name where the memory does not give them whole), and
 * made readable as the perf map's names are (managed_name.h):
 * "hotloop!Demo.Program::HotMethod",
 * "System.Private.CoreLib!System.Collections.Generic.Dictionary`2[__Canon,Int32]::TryGetValue";
 * a dynamic method by its own name, in
 * its module's assembly ("System.Private.CoreLib!dynamicClass::InvokeStub_X",
 * "Anonymously Hosted DynamicMethods Assembly" for those of no module's
 * file), as the perf map names them; a runtime stub by its kind, and the
 * method a precode leads to: "[stub] FixupPrecode for
 * hotloop!Demo.Program::HotMethod", as the outputs show the perf map's
 * "stub<N> KIND". The module's file is opened inside
 * the target's root and read once (managed_images.h). */
#ifndef PROFCPU_RUNTIME_NAMES_H
#define PROFCPU_RUNTIME_NAMES_H

#include "code_map.h"
#include "contract_descriptor.h"
#include "target_memory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct runtime_names;

/* Names from the runtime `descriptor` describes, with its modules' files
 * opened inside `root_fd` (target_root.h; -1: the profiler's own files),
 * which must stay open until runtime_names_free(). NULL, with the reason in
 * `error`, when the descriptor lacks what code_map.h needs. */
struct runtime_names *runtime_names_new(const struct contract_descriptor *descriptor, int root_fd,
					char *error, size_t error_size);
void runtime_names_free(struct runtime_names *names);

/* The readable name of the method whose JIT code holds `address`, or of
 * the stub, into `name` (`size` bytes), and what the memory gave in
 * `owner`. False when neither is there or its module's metadata has no
 * such method. */
bool runtime_names_lookup(struct runtime_names *names, struct target_memory *memory,
			  uint64_t address, char *name, size_t size, struct code_owner *owner);

/* The same name as the runtime's perf map writes it ("float64 [hotloop]
 * Demo.Program::HotMethod(int32)", "instance bool [System.Private.CoreLib]
 * System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::
 * TryGetValue(!0,!1&)", "[Assembly] dynamicClass::Name()", "stub
 * FixupPrecode for hotloop!Demo.Program::HotMethod"), which
 * the outputs make readable as they do the perf map's. A name whose generic
 * arguments do not fit in `size` is written as its definition's. */
bool runtime_names_runtime_name(struct runtime_names *names, struct target_memory *memory,
				uint64_t address, char *name, size_t size,
				struct code_owner *owner);

#endif
