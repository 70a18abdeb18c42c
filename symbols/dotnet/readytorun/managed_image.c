#include "managed_image.h"
#include "clr_metadata.h"
#include "clr_signature.h"
#include "little_endian.h"
#include "readytorun_bounds.h"
#include "sparse_file.h"
#include "target_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME		   1024
#define NO_METHOD		   UINT32_MAX
#define ELEMENT_TYPE_MODULE_ZAPSIG 0x3f
#define METHOD_DEF_TOKEN	   0x06000000u

/* ReadyToRun method signature flags (readytorun-format.md, "Method Signatures"). */
enum {
	METHOD_SIGNATURE_METHOD_INSTANTIATION = 0x04,
	METHOD_SIGNATURE_SLOT_INSTEAD_OF_TOKEN = 0x08,
	METHOD_SIGNATURE_MEMBER_REF_TOKEN = 0x10,
	METHOD_SIGNATURE_CONSTRAINED = 0x20,
	METHOD_SIGNATURE_OWNER_TYPE = 0x40,
	METHOD_SIGNATURE_UPDATE_CONTEXT = 0x80,
};

/* Where a method's code starts, and what names it. */
struct method_start {
	uint32_t runtime_function;
	uint32_t source;    /* MethodDef row, or the RVA of an instance signature */
	uint16_t component; /* for a MethodDef: 0 this assembly, N the Nth of a composite image */
	bool instance;
	bool name_made;
	char *name; /* NULL until made, or when it cannot be */
};

struct managed_image {
	uint8_t *data;
	size_t size;
	/* The file `data` holds (managed_image_open): file.bytes is `data`,
	 * whose pages are read as lookups need them while the file is open
	 * (keep_open). No bytes for managed_image_from_bytes. */
	struct sparse_file file;
	struct pe_image pe;
	struct clr_metadata metadata;
	struct readytorun r2r;
	bool has_native_code;
	struct clr_metadata manifest; /* the version bubble's extra AssemblyRefs */
	bool has_manifest;
	struct method_start *methods;
	size_t method_count;
	uint32_t *method_at; /* per runtime function: its method, or NO_METHOD */
	bool indexed;
	managed_image_assembly_finder finder;
	void *finder_context;
};

static void index_methods(struct managed_image *image);

/* Reads the headers and metadata of the assembly in `data` into `image`;
 * false when it is not one. */
static bool parse_image(struct managed_image *image, uint8_t *data, size_t size,
			const struct pe_loader *loader)
{
	uint32_t cli_rva, cli_size, metadata_rva, metadata_size;
	const uint8_t *cli, *metadata;

	if (!pe_image_parse(&image->pe, data, size, loader) ||
	    !pe_image_directory(&image->pe, PE_DIRECTORY_CLI_HEADER, &cli_rva, &cli_size) ||
	    !(cli = pe_image_at_rva(&image->pe, cli_rva, 16)))
		return false;
	metadata_rva = read_u32(cli + 8);
	metadata_size = read_u32(cli + 12);
	if (!(metadata = pe_image_at_rva(&image->pe, metadata_rva, metadata_size)) ||
	    !clr_metadata_parse(&image->metadata, metadata, metadata_size))
		return false;
	image->data = data;
	image->size = size;
	image->has_native_code =
	    readytorun_parse(&image->r2r, &image->pe) && image->r2r.runtime_function_count;
	image->has_manifest = image->r2r.manifest_metadata &&
			      clr_metadata_parse(&image->manifest, image->r2r.manifest_metadata,
						 image->r2r.manifest_metadata_size);
	return true;
}

struct managed_image *managed_image_from_bytes(uint8_t *data, size_t size)
{
	struct managed_image *image = calloc(1, sizeof(*image));

	if (image)
		image->file.fd = -1;
	if (!image || !parse_image(image, data, size, NULL)) {
		free(image);
		free(data);
		return NULL;
	}
	return image;
}

static bool load_file_range(void *context, uint64_t file_offset, uint64_t length)
{
	return sparse_file_load(context, file_offset, length);
}

/* Loads what lookups will read once the file is closed: the method index,
 * every function's unwind info and the debug info. */
static void load_for_lookups(struct managed_image *image)
{
	struct readytorun_runtime_function function;
	const uint8_t *unwind_info;
	size_t unwind_size;

	index_methods(image);
	for (uint32_t i = 0; readytorun_runtime_function(&image->r2r, i, &function); i++)
		readytorun_unwind_info(&image->r2r, &function, &unwind_info, &unwind_size);
	readytorun_load_debug_info(&image->r2r);
}

/* An image whose file is `fd`'s `size` bytes at `offset` (size 0: the
 * whole file). */
static struct managed_image *open_image(int fd, uint64_t offset, uint64_t size, bool keep_open)
{
	struct managed_image *image = calloc(1, sizeof(*image));
	struct pe_loader loader;
	bool opened;

	if (!image) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* Only the headers, metadata and ReadyToRun tables are read: a tenth
	 * of CoreLib, whose code is not needed. */
	opened =
	    size ? sparse_file_open_range(&image->file, fd, offset, size, MANAGED_IMAGE_MAX_SIZE)
		 : sparse_file_open(&image->file, fd, MANAGED_IMAGE_MAX_SIZE);
	if (!opened) {
		free(image);
		return NULL;
	}
	loader = (struct pe_loader){load_file_range, &image->file};
	if (!parse_image(image, image->file.bytes, image->file.size, &loader)) {
		sparse_file_free(&image->file);
		free(image);
		return NULL;
	}
	/* Code that is never sampled is never read: a walk needs a few
	 * hundred methods' unwind info, and names come from the jitdump
	 * when there is one. Otherwise everything a lookup may read is read
	 * now, and the file closed. */
	if (keep_open && image->has_native_code)
		return image;
	if (image->has_native_code)
		load_for_lookups(image);
	pe_image_stop_loading(&image->pe);
	sparse_file_done(&image->file);
	return image;
}

struct managed_image *managed_image_open(int root_fd, const char *path, bool keep_open)
{
	return open_image(target_file_open(root_fd, path, 0), 0, 0, keep_open);
}

struct managed_image *managed_image_open_embedded(int root_fd, const char *path, uint64_t offset,
						  uint64_t size, bool keep_open)
{
	return size ? open_image(target_file_open(root_fd, path, 0), offset, size, keep_open)
		    : NULL;
}

void managed_image_free(struct managed_image *image)
{
	if (!image)
		return;
	for (size_t i = 0; i < image->method_count; i++)
		free(image->methods[i].name);
	free(image->methods);
	free(image->method_at);
	if (image->file.bytes)
		sparse_file_free(&image->file); /* its bytes are `data` */
	else
		free(image->data);
	free(image);
}

void managed_image_set_assembly_finder(struct managed_image *image,
				       managed_image_assembly_finder finder, void *context)
{
	image->finder = finder;
	image->finder_context = context;
}

bool managed_image_has_native_code(const struct managed_image *image)
{
	return image->has_native_code;
}

const char *managed_image_assembly_name(const struct managed_image *image)
{
	return clr_metadata_assembly_name(&image->metadata);
}

const struct clr_metadata *managed_image_metadata(const struct managed_image *image)
{
	return &image->metadata;
}

void managed_image_identity(const struct managed_image *image, uint32_t *timestamp,
			    uint8_t mvid[16], uint64_t *size)
{
	*timestamp = image->pe.timestamp;
	*size = image->size;
	if (!clr_metadata_mvid(&image->metadata, mvid))
		memset(mvid, 0, 16);
}

/* The module a ReadyToRun module override index names (readytorun-format.md,
 * "ManifestMetadata"): 0 this one, then the IL AssemblyRefs, then those of
 * the manifest metadata. */
static const struct clr_metadata *module_override(void *context, uint32_t index)
{
	struct managed_image *image = context;
	/* A composite image has no IL metadata: its metadata is the manifest. */
	uint32_t il_references =
	    image->r2r.component_count
		? 0
		: clr_metadata_row_count(&image->metadata, CLR_TABLE_ASSEMBLY_REF);
	bool manifest_counts_itself =
	    image->r2r.major_version > 6 ||
	    (image->r2r.major_version == 6 && image->r2r.minor_version >= 3);
	const char *name;

	if (index == 0)
		return &image->metadata;
	if (index <= il_references)
		name = clr_metadata_assembly_ref_name(&image->metadata, index);
	else if (!image->has_manifest)
		return NULL;
	else if (manifest_counts_itself)
		name = clr_metadata_assembly_ref_name(&image->manifest, index - il_references - 1);
	else
		name = clr_metadata_assembly_ref_name(&image->manifest, index - il_references);
	if (!strcmp(name, managed_image_assembly_name(image)))
		return &image->metadata;
	return *name && image->finder ? image->finder(image->finder_context, name) : NULL;
}

/* "RET [Assembly] Owner::Method(PARAMS)", the runtime's name for a method
 * of the module `scope` names. */
static void write_method_name(const struct clr_type_scope *scope, const char *owner,
			      const char *method_name, const uint8_t *signature,
			      uint32_t signature_size, struct name_text *name)
{
	char parameters_text[MAX_NAME] = "";
	struct name_text parameters = {parameters_text, sizeof(parameters_text), 0};

	if (!clr_signature_write_method(signature, signature_size, scope, name, &parameters))
		name_text_append(name, "?");
	name_text_append(name, " [");
	name_text_append(name, clr_metadata_assembly_name(scope->metadata));
	name_text_append(name, "] ");
	name_text_append(name, owner);
	name_text_append(name, "::");
	name_text_append(name, method_name);
	name_text_append(name, parameters_text);
}

/* A composite image has no module of its own: a method token without an
 * explicit context belongs to the module of the method's type, the one its
 * owner type signature names first (ELEMENT_TYPE_MODULE_ZAPSIG). */
static const struct clr_metadata *composite_token_module(struct managed_image *image,
							 const struct clr_signature_reader *reader,
							 uint32_t flags)
{
	struct clr_signature_reader owner = *reader;

	if (!(flags & METHOD_SIGNATURE_OWNER_TYPE) || owner.position >= owner.size ||
	    owner.bytes[owner.position] != ELEMENT_TYPE_MODULE_ZAPSIG)
		return &image->metadata;
	owner.position++;
	return module_override(image, clr_signature_read_number(&owner));
}

/* Reads a ReadyToRun method signature (readytorun-format.md, "Method
 * Signatures"); with `name` given, writes the method's full name into it;
 * with `own_row` given, sets it to the method's MethodDef row when that is
 * one of this image's own assembly (0 otherwise). Returns the signature's
 * length, 0 when it is malformed. */
static size_t read_instance_signature(struct managed_image *image, const uint8_t *bytes,
				      size_t size, struct name_text *name, uint32_t *own_row)
{
	struct clr_signature_reader reader = {bytes, size, 0, false};
	struct clr_type_scope scope = {&image->metadata, module_override, image};
	char owner_text[MAX_NAME] = "";
	struct name_text owner = {owner_text, sizeof(owner_text), 0};
	uint32_t flags = clr_signature_read_number(&reader), row = 0;

	/* Only a name needs the method's module (which may mean reading it). */
	if (flags & METHOD_SIGNATURE_UPDATE_CONTEXT) {
		uint32_t index = clr_signature_read_number(&reader);

		scope.metadata = name ? module_override(image, index) : NULL;
	} else if (image->r2r.component_count) {
		scope.metadata = name ? composite_token_module(image, &reader, flags) : NULL;
	}
	if ((flags & METHOD_SIGNATURE_OWNER_TYPE) &&
	    !clr_signature_write_type(&reader, &scope, CLR_TYPE_REFLECTION, name ? &owner : NULL))
		return 0;
	row = clr_signature_read_number(&reader);
	if (flags & METHOD_SIGNATURE_METHOD_INSTANTIATION) {
		uint32_t count = clr_signature_read_number(&reader);

		for (uint32_t i = 0; i < count && !reader.failed; i++)
			if (!clr_signature_write_type(&reader, &scope, CLR_TYPE_REFLECTION, NULL))
				return 0;
	}
	if ((flags & METHOD_SIGNATURE_CONSTRAINED) &&
	    !clr_signature_write_type(&reader, &scope, CLR_TYPE_REFLECTION, NULL))
		return 0;
	if (reader.failed)
		return 0;
	if (own_row)
		*own_row =
		    flags & (METHOD_SIGNATURE_UPDATE_CONTEXT | METHOD_SIGNATURE_MEMBER_REF_TOKEN |
			     METHOD_SIGNATURE_SLOT_INSTEAD_OF_TOKEN) ||
			    image->r2r.component_count
			? 0
			: row;
	if (name && scope.metadata && !(flags & METHOD_SIGNATURE_SLOT_INSTEAD_OF_TOKEN)) {
		const uint8_t *signature = NULL;
		uint32_t signature_size = 0;
		const char *method_name = NULL;
		struct clr_method_def method;
		struct clr_member_ref member;

		if (flags & METHOD_SIGNATURE_MEMBER_REF_TOKEN) {
			if (clr_metadata_member_ref(scope.metadata, row, &member)) {
				method_name = member.name;
				signature = member.signature;
				signature_size = member.signature_size;
			}
		} else if (clr_metadata_method_def(scope.metadata, row, &method)) {
			method_name = method.name;
			signature = method.signature;
			signature_size = method.signature_size;
			if (owner.length == 0)
				clr_signature_write_type_name(
				    scope.metadata,
				    (struct clr_token){
					CLR_TABLE_TYPE_DEF,
					clr_metadata_method_owner(scope.metadata, row)},
				    CLR_TYPE_REFLECTION, &owner);
		}
		if (method_name)
			write_method_name(&scope, owner_text, method_name, signature,
					  signature_size, name);
	}
	return reader.position;
}

/* The metadata of component `component` (1-based) of a composite image:
 * that of the assembly file its manifest AssemblyRef names. */
static const struct clr_metadata *component_metadata(struct managed_image *image,
						     uint16_t component)
{
	const char *name = clr_metadata_assembly_ref_name(
	    image->has_manifest ? &image->manifest : &image->metadata, component);

	return *name && image->finder ? image->finder(image->finder_context, name) : NULL;
}

static void name_method_def(struct managed_image *image, uint16_t component, uint32_t row,
			    struct name_text *name)
{
	const struct clr_metadata *metadata =
	    component ? component_metadata(image, component) : &image->metadata;
	struct clr_type_scope scope = {metadata, module_override, image};
	char owner_text[MAX_NAME] = "";
	struct name_text owner = {owner_text, sizeof(owner_text), 0};
	struct clr_method_def method;

	if (!metadata || !clr_metadata_method_def(metadata, row, &method))
		return;
	clr_signature_write_type_name(
	    metadata,
	    (struct clr_token){CLR_TABLE_TYPE_DEF, clr_metadata_method_owner(metadata, row)},
	    CLR_TYPE_REFLECTION, &owner);
	write_method_name(&scope, owner_text, method.name, method.signature, method.signature_size,
			  name);
}

bool managed_image_method_def_name(struct managed_image *image, uint32_t token, char *name,
				   size_t size)
{
	struct name_text text = {name, size, 0};

	if (size == 0 || token >> 24 != CLR_TABLE_METHOD_DEF)
		return false;
	name[0] = '\0';
	name_method_def(image, 0, token & 0xffffff, &text);
	return text.length > 0;
}

static bool add_method(struct managed_image *image, size_t *capacity, struct method_start start)
{
	if (image->method_count == *capacity) {
		size_t grown_capacity = *capacity ? *capacity * 2 : 1024;
		struct method_start *grown =
		    realloc(image->methods, grown_capacity * sizeof(*grown));

		if (!grown)
			return false;
		image->methods = grown;
		*capacity = grown_capacity;
	}
	image->methods[image->method_count++] = start;
	return true;
}

/* Gives each runtime function the method whose code it is: the one that
 * starts there, or else the one before it (funclets follow their method).
 * Where two entries start at one place, the first listed wins. */
static void assign_runtime_functions(struct managed_image *image)
{
	uint32_t count = image->r2r.runtime_function_count, owner = NO_METHOD;

	image->method_at = malloc((size_t)count * sizeof(*image->method_at));
	if (!image->method_at)
		return;
	memset(image->method_at, 0xff, (size_t)count * sizeof(*image->method_at));
	for (size_t i = image->method_count; i-- > 0;)
		image->method_at[image->methods[i].runtime_function] = (uint32_t)i;
	for (uint32_t i = 0; i < count; i++) {
		if (image->method_at[i] != NO_METHOD)
			owner = image->method_at[i];
		image->method_at[i] = owner;
	}
}

/* Adds the methods of one MethodDefEntryPoints table. */
static bool index_method_defs(struct managed_image *image, size_t *capacity,
			      const struct readytorun_table *entry_points, uint16_t component)
{
	uint32_t rows = readytorun_method_entry_count(entry_points), runtime_function;

	/* The image's own methods are no more than its metadata lists. */
	if (component == 0 && rows > clr_metadata_row_count(&image->metadata, CLR_TABLE_METHOD_DEF))
		rows = clr_metadata_row_count(&image->metadata, CLR_TABLE_METHOD_DEF);

	for (uint32_t row = 1; row <= rows; row++)
		if (readytorun_method_entry_point(&image->r2r, entry_points, row,
						  &runtime_function) &&
		    !add_method(image, capacity,
				(struct method_start){.runtime_function = runtime_function,
						      .source = row,
						      .component = component}))
			return false;
	return true;
}

/* Lists where every precompiled method starts: the MethodDef entry points
 * (of each component, in a composite image), then the generic
 * instantiations. */
static void index_methods(struct managed_image *image)
{
	const struct readytorun_table *instances = &image->r2r.instance_entry_points;
	size_t capacity = 0, entries_left = instances->end_rva - instances->start_rva;
	uint32_t cursor = 0, runtime_function;
	struct readytorun_table component_entry_points;
	const uint8_t *signature;
	size_t available;

	image->indexed = true;
	if (!index_method_defs(image, &capacity, &image->r2r.method_def_entry_points, 0))
		return;
	for (uint32_t i = 0; i < image->r2r.component_count && i < UINT16_MAX; i++)
		if (readytorun_component_entry_points(&image->r2r, i, &component_entry_points) &&
		    !index_method_defs(image, &capacity, &component_entry_points,
				       (uint16_t)(i + 1)))
			return;
	/* Each entry takes at least two bytes of the table: a bound for a
	 * table whose offsets loop. */
	while (entries_left-- > 0 &&
	       readytorun_next_instance_entry(&image->r2r, &cursor, &signature, &available)) {
		size_t length = read_instance_signature(image, signature, available, NULL, NULL);

		if (length &&
		    readytorun_instance_entry_point(&image->r2r, signature, length,
						    &runtime_function) &&
		    !add_method(image, &capacity,
				(struct method_start){
				    .runtime_function = runtime_function,
				    .source = (uint32_t)(signature - instances->section_base),
				    .instance = true}))
			return;
	}
	assign_runtime_functions(image);
}

/* The method whose code includes runtime function `index`. */
static struct method_start *method_of(struct managed_image *image, uint32_t index)
{
	if (!image->method_at || index >= image->r2r.runtime_function_count ||
	    image->method_at[index] == NO_METHOD)
		return NULL;
	return &image->methods[image->method_at[index]];
}

static const char *method_name(struct managed_image *image, struct method_start *method)
{
	if (!method->name_made) {
		char text[MAX_NAME] = "";
		struct name_text name = {text, sizeof(text), 0};

		method->name_made = true;
		if (method->instance) {
			const struct readytorun_table *table = &image->r2r.instance_entry_points;

			read_instance_signature(image, table->section_base + method->source,
						table->section_end_rva - method->source, &name,
						NULL);
		} else {
			name_method_def(image, method->component, method->source, &name);
		}
		if (name.length)
			name_text_append(&name, "[PreJIT]"); /* precompiled code */
		method->name = name.length ? strdup(text) : NULL;
	}
	return method->name;
}

static bool runtime_function_at(const struct managed_image *image, uint64_t file_offset,
				uint32_t *rva, uint32_t *index)
{
	return image->has_native_code &&
	       pe_image_rva_of_file_offset(&image->pe, file_offset, rva) &&
	       readytorun_find_runtime_function(&image->r2r, *rva, index);
}

bool managed_image_lookup(struct managed_image *image, uint64_t file_offset, const char **name,
			  uint64_t *offset)
{
	struct readytorun_runtime_function start;
	struct method_start *method;
	uint32_t rva, index;

	if (!runtime_function_at(image, file_offset, &rva, &index))
		return false;
	if (!image->indexed)
		index_methods(image);
	method = method_of(image, readytorun_hot_part(&image->r2r, index));
	if (!method || !(*name = method_name(image, method)) ||
	    !readytorun_runtime_function(&image->r2r, method->runtime_function, &start))
		return false;
	*offset = rva >= start.begin_rva ? rva - start.begin_rva : 0;
	return true;
}

const char *managed_image_component_at(struct managed_image *image, uint64_t file_offset)
{
	struct method_start *method;
	uint32_t rva, index;

	if (!image->r2r.component_count || !runtime_function_at(image, file_offset, &rva, &index))
		return NULL;
	if (!image->indexed)
		index_methods(image);
	method = method_of(image, readytorun_hot_part(&image->r2r, index));
	if (!method || method->instance || !method->component)
		return NULL;
	return clr_metadata_assembly_ref_name(
	    image->has_manifest ? &image->manifest : &image->metadata, method->component);
}

/* The MethodDef row of `method` in its assembly's metadata (this image's,
 * or its component's in a composite image), whose PDB has its lines; 0 for
 * an instantiation of a method its signature does not name by a MethodDef
 * token here. */
static uint32_t own_method_row(struct managed_image *image, const struct method_start *method)
{
	const struct readytorun_table *table = &image->r2r.instance_entry_points;
	uint32_t row = 0;

	if (!method->instance)
		return method->source;
	read_instance_signature(image, table->section_base + method->source,
				table->section_end_rva - method->source, NULL, &row);
	return row;
}

bool managed_image_il_offset(struct managed_image *image, uint64_t file_offset,
			     uint32_t *method_token, uint32_t *il_offset)
{
	struct readytorun_runtime_function start;
	struct readytorun_bounds bounds;
	struct managed_line_map_entry entry, last = {0};
	struct method_start *method;
	const uint8_t *debug_info;
	size_t available;
	uint32_t rva, index, native_offset, row;
	bool found = false;

	if (!runtime_function_at(image, file_offset, &rva, &index))
		return false;
	if (!image->indexed)
		index_methods(image);
	/* A cold part's offsets are not from its method's start. */
	if (readytorun_hot_part(&image->r2r, index) != index ||
	    !(method = method_of(image, index)) || !(row = own_method_row(image, method)) ||
	    !readytorun_runtime_function(&image->r2r, method->runtime_function, &start) ||
	    rva < start.begin_rva ||
	    !readytorun_debug_info(&image->r2r, method->runtime_function, &debug_info,
				   &available) ||
	    !readytorun_bounds_start(&bounds, debug_info, available, image->r2r.major_version))
		return false;
	/* The last entry at or before the offset (funclets' offsets are from
	 * their method's start too). */
	native_offset = rva - start.begin_rva;
	while (readytorun_bounds_next(&bounds, &entry) && entry.native_offset <= native_offset) {
		last = entry;
		found = true;
	}
	*method_token = METHOD_DEF_TOKEN | row;
	return found && managed_il_offset_of(&last, il_offset);
}

bool managed_image_unwind_at(const struct managed_image *image, uint64_t file_offset,
			     struct windows_unwind_code_at *unwind)
{
	struct readytorun_runtime_function function;
	uint32_t rva, index;

	if (!runtime_function_at(image, file_offset, &rva, &index) ||
	    !readytorun_runtime_function(&image->r2r, index, &function) ||
	    rva < function.begin_rva || rva >= function.end_rva)
		return false;
	/* Precompiled code is never OSR code; the walk says what it takes. */
	*unwind = (struct windows_unwind_code_at){.packed = function.packed_unwind};
	if (!function.packed_unwind &&
	    !readytorun_unwind_info(&image->r2r, &function, &unwind->info, &unwind->info_size))
		return false;
	unwind->offset = rva - function.begin_rva;
	unwind->code_size = function.end_rva - rva < WINDOWS_UNWIND_MAX_EPILOG
				? function.end_rva - rva
				: WINDOWS_UNWIND_MAX_EPILOG;
	unwind->code = pe_image_at_rva(&image->pe, rva, (uint32_t)unwind->code_size);
	if (!unwind->code)
		unwind->code_size = 0;
	return true;
}
