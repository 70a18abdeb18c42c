/* The ReadyToRun (precompiled) part of a .NET image: the READYTORUN_HEADER
 * that the CLI header's ManagedNativeHeader points to, and the sections
 * that say where each method's native code is (dotnet/runtime
 * docs/design/coreclr/botr/readytorun-format.md):
 *
 *   RuntimeFunctions (102)           every code block, sorted by RVA, with
 *                                    its unwind information (x64: begin,
 *                                    end, UNWIND_INFO RVA)
 *   MethodDefEntryPoints (103)       MethodDef row -> first runtime function
 *                                    (a NativeArray)
 *   InstanceMethodEntryPoints (109)  generic instantiations: method signature
 *                                    -> first runtime function (a NativeHashtable)
 *   DebugInfo (105)                  runtime function -> its native to IL
 *                                    offset map (a NativeArray;
 *                                    readytorun_bounds.h reads the maps)
 *   HotColdMap (120)                 cold parts of split methods -> hot part
 *   ComponentAssemblies (115)        a composite image (the code of many
 *                                    assemblies in one file): per assembly, its
 *                                    own MethodDefEntryPoints
 *   OwnerCompositeExecutable (116)   a component of a composite image: the
 *                                    file that holds its code
 *
 * The image is untrusted: every offset is checked against the section that
 * holds the table, and walks are bounded. */
#ifndef PROFCPU_READYTORUN_H
#define PROFCPU_READYTORUN_H

#include "call_frame_info.h"
#include "pe_image.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A table in the image: its bytes are those of the PE section holding it,
 * from `start_rva` to `end_rva`, and offsets inside it are RVAs. */
struct readytorun_table {
	const uint8_t *section_base; /* the byte of RVA 0, as if the section were mapped */
	uint32_t start_rva, end_rva; /* the table; 0 and 0 when the image has none */
	uint32_t section_start_rva, section_end_rva; /* what relative offsets may reach */
};

struct readytorun {
	const struct pe_image *image;
	enum frame_machine machine; /* of its code */
	uint16_t major_version, minor_version;
	uint32_t flags; /* READYTORUN_FLAG_* */
	const uint8_t *runtime_functions;
	uint32_t runtime_function_count;
	struct readytorun_table method_def_entry_points, instance_entry_points;
	const uint8_t *hot_cold_map; /* pairs of (cold index, hot index) */
	uint32_t hot_cold_count;
	const uint8_t *components;	  /* ComponentAssemblies: 16 bytes each */
	uint32_t component_count;	  /* parallel to the manifest's AssemblyRef rows */
	const uint8_t *manifest_metadata; /* ECMA-335 metadata; NULL when absent */
	uint32_t manifest_metadata_size;
	char owner_composite[256]; /* "" unless this is a component of a composite image */
	uint32_t debug_info_rva, debug_info_size; /* the DebugInfo section; 0 when none */
	struct readytorun_table debug_info;	  /* it, once loaded */
	bool debug_info_tried;
};

/* One code block (a RUNTIME_FUNCTION: x64's holds its end, arm64's its
 * unwind data's function length). */
struct readytorun_runtime_function {
	uint32_t begin_rva, end_rva; /* [begin, end) */
	uint32_t unwind_info_rva;    /* x64 UNWIND_INFO or arm64 .xdata; 0 when packed */
	uint32_t packed_unwind;	     /* arm64's packed unwind data, 0 when none */
};

/* Reads the ReadyToRun header of `image` (which must outlive `r2r`). False
 * when the image has none (IL only) or it is malformed, or its code is for
 * neither x64 nor arm64. */
bool readytorun_parse(struct readytorun *r2r, const struct pe_image *image);

bool readytorun_runtime_function(const struct readytorun *r2r, uint32_t index,
				 struct readytorun_runtime_function *function);

/* The index of the runtime function whose code holds `rva`; false when none. */
bool readytorun_find_runtime_function(const struct readytorun *r2r, uint32_t rva, uint32_t *index);

/* The hot part of a split method when runtime function `index` is its cold
 * part; `index` itself otherwise. */
uint32_t readytorun_hot_part(const struct readytorun *r2r, uint32_t index);

/* The unwind info bytes of `function` (x64 UNWIND_INFO: header, unwind
 * codes, then the handler RVA or chained function; arm64 .xdata: header,
 * epilog scopes, unwind codes); false when they lie outside the image or
 * the function's unwind data is packed. */
bool readytorun_unwind_info(const struct readytorun *r2r,
			    const struct readytorun_runtime_function *function,
			    const uint8_t **bytes, size_t *size);

/* The MethodDefEntryPoints of component `index` (0-based, that is
 * AssemblyRef row index + 1 of the manifest) of a composite image; false
 * when it has none. */
bool readytorun_component_entry_points(const struct readytorun *r2r, uint32_t index,
				       struct readytorun_table *entry_points);

/* How many MethodDef rows the MethodDefEntryPoints `entry_points` covers
 * (no more than its block index has room for). */
uint32_t readytorun_method_entry_count(const struct readytorun_table *entry_points);

/* The first runtime function of MethodDef row `method_row` in the
 * MethodDefEntryPoints `entry_points` (the image's own, or a component's);
 * false when the method has no precompiled code. */
bool readytorun_method_entry_point(const struct readytorun *r2r,
				   const struct readytorun_table *entry_points, uint32_t method_row,
				   uint32_t *runtime_function);

/* Loads the DebugInfo section, on the first call (a tenth of an image: read
 * only when a line is asked for); false when the image has none. */
bool readytorun_load_debug_info(struct readytorun *r2r);

/* The debug info of runtime function `index` (a method's first: its
 * funclets and cold part have none of their own): `bytes`, with `available`
 * bytes up to the end of the section, that readytorun_bounds_start() reads.
 * False when the image has none for it. */
bool readytorun_debug_info(struct readytorun *r2r, uint32_t index, const uint8_t **bytes,
			   size_t *available);

/* Walks the InstanceMethodEntryPoints hashtable. Start with *cursor = 0;
 * each call gives the next entry's method signature (`signature`, with
 * `available` bytes up to the end of its section) and returns false at the
 * end. The entry point follows the signature: pass the signature's length
 * to readytorun_instance_entry_point(). */
bool readytorun_next_instance_entry(const struct readytorun *r2r, uint32_t *cursor,
				    const uint8_t **signature, size_t *available);

/* The runtime function of the instance entry whose signature (from
 * readytorun_next_instance_entry) is `signature_length` bytes long. */
bool readytorun_instance_entry_point(const struct readytorun *r2r, const uint8_t *signature,
				     size_t signature_length, uint32_t *runtime_function);

#endif
