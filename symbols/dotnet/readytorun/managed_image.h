/* One .NET assembly file as the runtime maps it: a PE image with ECMA-335
 * metadata and, when it was compiled ahead of time, ReadyToRun code. Names
 * the precompiled method at an offset in the file the way the runtime names
 * it in its perf map and jitdump:
 *
 *   [instance ]RET [Assembly] Namespace.Type::Method(PARAMS)[PreJIT]
 *   int32 [System.Private.CoreLib]
 * System.Collections.Generic.GenericArraySortHelper`1[System.Int32]::PickPivotAndPartition(valuetype
 * System.Span`1<!0>)[PreJIT]
 *
 * The file is read inside the target's root, each part once, and indexed on
 * the first lookup; method names are made on first use and kept. */
#ifndef PROFCPU_MANAGED_IMAGE_H
#define PROFCPU_MANAGED_IMAGE_H

#include "readytorun.h"
#include "windows_unwind.h"

#include <stdbool.h>
#include <stdint.h>

struct managed_image;
struct clr_metadata;

/* Finds the metadata of another assembly, `name` (an AssemblyRef's name),
 * for the types a signature borrows from it; NULL when it cannot be had. */
typedef const struct clr_metadata *(*managed_image_assembly_finder)(void *context,
								    const char *name);

/* Reads the assembly at `path` (as the target sees it) inside `root_fd`
 * (target_root.h; -1: the profiler's own files): its headers, metadata and
 * ReadyToRun tables, not its code. With `keep_open`, an image with
 * ReadyToRun code keeps its file open until managed_image_free() and reads
 * the rest (a method's unwind info and code, the method index) when a
 * lookup first needs it; otherwise it reads all that now and closes the
 * file. NULL when it is not a regular file, too large, unreadable, or not a
 * .NET assembly. */
struct managed_image *managed_image_open(int root_fd, const char *path, bool keep_open);
/* The same for the assembly stored as it is in the `size` bytes at
 * `offset` of the file at `path` (a single-file app's executable,
 * bundle_manifest.h): the file offsets the lookups take are then from the
 * assembly's start. */
struct managed_image *managed_image_open_embedded(int root_fd, const char *path, uint64_t offset,
						  uint64_t size, bool keep_open);
/* Reads an assembly from `size` bytes of `data`, which it takes (free()d
 * with the image). NULL, freeing `data`, when it is not an assembly. */
struct managed_image *managed_image_from_bytes(uint8_t *data, size_t size);
void managed_image_free(struct managed_image *image);

/* Where other assemblies of the same version bubble are found. */
void managed_image_set_assembly_finder(struct managed_image *image,
				       managed_image_assembly_finder finder, void *context);

/* Whether the image holds ReadyToRun code (x64 or arm64). */
bool managed_image_has_native_code(const struct managed_image *image);

const char *managed_image_assembly_name(const struct managed_image *image);
const struct clr_metadata *managed_image_metadata(const struct managed_image *image);

/* The runtime's name for the method of MethodDef `token`, from the image's
 * own metadata, as the runtime writes the names of JIT code in its perf map
 * ("float64 [hotloop] Demo.Program::HotMethod(int32)"), into `name` (size
 * bytes): for names found without the runtime's help (symbols/runtime_memory),
 * which then go through managed_name_readable() as the perf map's do. Generic
 * arguments are the runtime's, not the metadata's: a generic type is written
 * as its definition ("List`1"). False when the token names no method. */
bool managed_image_method_def_name(struct managed_image *image, uint32_t token, char *name,
				   size_t size);

/* The build identity: the COFF timestamp, the module's MVID and the file's
 * size (a composite image's component keeps its assembly's MVID). */
void managed_image_identity(const struct managed_image *image, uint32_t *timestamp,
			    uint8_t mvid[16], uint64_t *size);

/* The name of the precompiled method whose code holds the byte at
 * `file_offset`, and the offset of that byte from the method's start. The
 * name stays valid until managed_image_free(). False when no method's code
 * is there. */
bool managed_image_lookup(struct managed_image *image, uint64_t file_offset, const char **name,
			  uint64_t *offset);

/* The assembly (its AssemblyRef name) of the method whose code holds the
 * byte at `file_offset` of a composite image, one of its components; NULL
 * for an image that is not composite, or code of no such method. */
const char *managed_image_component_at(struct managed_image *image, uint64_t file_offset);

/* The method (its MethodDef token in its assembly, this image's or the
 * component's that managed_image_component_at() names; for a generic
 * instantiation, its generic method's) and IL offset of the precompiled
 * code holding the byte at `file_offset` (for a caller's frame, its call),
 * from the image's debug info (readytorun_bounds.h). False where it has
 * none: no debug info there, a method named otherwise than by a MethodDef
 * token, a method's cold part, its epilog, or code the compiler mapped to
 * no IL offset. */
bool managed_image_il_offset(struct managed_image *image, uint64_t file_offset,
			     uint32_t *method_token, uint32_t *il_offset);

/* How to unwind through the precompiled code holding the byte at
 * `file_offset` (windows_unwind_step): its runtime function's unwind info, the
 * byte's offset in the function and the code from there on, all valid
 * until managed_image_free(). False when no precompiled code is there. */
bool managed_image_unwind_at(const struct managed_image *image, uint64_t file_offset,
			     struct windows_unwind_code_at *unwind);

#endif
