#include "runtime_names.h"

#include "clr_signature.h"
#include "generic_arguments.h"
#include "managed_images.h"
#include "managed_name.h"
#include "managed_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct runtime_names {
	struct code_map *map;
	struct managed_images *images;
	struct generic_arguments *arguments; /* NULL: definitions' names only */
};

/* The longest name made, generic arguments and all (the perf map's
 * longest in a Roslyn run: some 900 characters). */
enum { MAX_RUNTIME_NAME = 4096 };

struct runtime_names *runtime_names_new(const struct contract_descriptor *descriptor, int root_fd,
					char *error, size_t error_size)
{
	struct runtime_names *names = calloc(1, sizeof(*names));

	if (!names) {
		snprintf(error, error_size, "out of memory");
		return NULL;
	}
	names->map = code_map_new(descriptor, error, error_size);
	names->arguments = names->map ? generic_arguments_new(descriptor, NULL, 0) : NULL;
	names->images = names->map ? managed_images_new(root_fd) : NULL;
	if (!names->images) {
		if (names->map)
			snprintf(error, error_size, "out of memory");
		runtime_names_free(names);
		return NULL;
	}
	return names;
}

void runtime_names_free(struct runtime_names *names)
{
	if (!names)
		return;
	code_map_free(names->map);
	generic_arguments_free(names->arguments);
	managed_images_free(names->images);
	free(names);
}

/* The runtime's name for a dynamic method, as its perf map writes it:
 * "[Assembly] dynamicClass::Name()", the assembly its module's file holds,
 * or the one the runtime hosts methods of no module in. */
static bool dynamic_method_name(struct runtime_names *names, const struct code_owner *owner,
				char *runtime_name, size_t size)
{
	struct managed_image *image =
	    owner->module_path[0] ? managed_images_get(names->images, owner->module_path) : NULL;

	if (owner->module_path[0] && !image)
		return false;
	snprintf(runtime_name, size, "[%s] dynamicClass::%s()",
		 image ? managed_image_assembly_name(image)
		       : "Anonymously Hosted DynamicMethods Assembly",
		 owner->dynamic_name);
	return true;
}

/* generic_arguments_namer(): a TypeDef of a module the runtime loaded,
 * named from its file's metadata. */
static bool name_type_def(void *context, struct target_memory *memory, uint64_t module,
			  uint32_t row, char *name, size_t size)
{
	struct runtime_names *names = context;
	char path[512];
	struct managed_image *image;
	const struct clr_metadata *metadata;
	struct name_text text = {name, size, 0};

	code_map_module_path(names->map, memory, module, path, sizeof(path));
	if (!path[0] || !(image = managed_images_get(names->images, path)) ||
	    !(metadata = managed_image_metadata(image)) ||
	    row > clr_metadata_row_count(metadata, CLR_TABLE_TYPE_DEF))
		return false;
	name[0] = '\0';
	clr_signature_write_type_name(metadata, (struct clr_token){CLR_TABLE_TYPE_DEF, row},
				      CLR_TYPE_REFLECTION, &text);
	return text.length > 0 && text.length + 1 < size;
}

/* Adds to the definition's `name` ("RET [Assembly] Ns.Type`2::Method(...)")
 * the generic arguments of the method's type, where the perf map writes
 * them: "Ns.Type`2[System.__Canon,System.Int32]::Method". The name stays
 * the definition's when the memory does not give them whole, or its type
 * is not the method's. */
static void add_generic_arguments(struct runtime_names *names, struct target_memory *memory,
				  const struct code_owner *owner, struct managed_image *image,
				  char *name, size_t size)
{
	const struct clr_metadata *metadata = managed_image_metadata(image);
	char arguments[MAX_RUNTIME_NAME], type[1024], marker[sizeof(type) + 8];
	struct name_text type_text = {type, sizeof(type), 0};
	uint32_t row;
	char *at;

	if (!names->arguments || !owner->method_table ||
	    !generic_arguments_write(names->arguments, memory, owner->method_table, name_type_def,
				     names, &row, arguments, sizeof(arguments)) ||
	    !arguments[0] || row != clr_metadata_method_owner(metadata, owner->token & 0xffffff))
		return;
	type[0] = '\0';
	clr_signature_write_type_name(metadata, (struct clr_token){CLR_TABLE_TYPE_DEF, row},
				      CLR_TYPE_REFLECTION, &type_text);
	snprintf(marker, sizeof(marker), "] %s::", type);
	at = strstr(name, marker);
	if (!type[0] || !at || strlen(name) + strlen(arguments) >= size)
		return;
	at += strlen(marker) - 2; /* before the "::" */
	memmove(at + strlen(arguments), at, strlen(at) + 1);
	memcpy(at, arguments, strlen(arguments));
}

/* The runtime's name of the method `owner` holds (code_map.h). */
static bool method_name(struct runtime_names *names, struct target_memory *memory,
			const struct code_owner *owner, char *name, size_t size)
{
	struct managed_image *image;

	if (owner->dynamic_name[0])
		return dynamic_method_name(names, owner, name, size);
	if (!owner->token || !owner->module_path[0] ||
	    !(image = managed_images_get(names->images, owner->module_path)) ||
	    !managed_image_method_def_name(image, owner->token, name, size))
		return false;
	add_generic_arguments(names, memory, owner, image, name, size);
	return true;
}

/* A stub's name as the runtime's perf map writes stubs' ("stub KIND"),
 * with the method it leads to made readable: "stub FixupPrecode for
 * hotloop!Demo.Program::HotMethod". */
static void stub_name(struct runtime_names *names, struct target_memory *memory,
		      const struct code_owner *owner, char *name, size_t size)
{
	char method[MAX_RUNTIME_NAME];
	char *readable = method_name(names, memory, owner, method, sizeof(method))
			     ? managed_name_readable(method, false)
			     : NULL;

	if (readable)
		snprintf(name, size, "stub %s for %s", owner->stub_kind, readable);
	else
		snprintf(name, size, "stub %s", owner->stub_kind);
	free(readable);
}

bool runtime_names_runtime_name(struct runtime_names *names, struct target_memory *memory,
				uint64_t address, char *name, size_t size, struct code_owner *owner)
{
	if (!code_map_lookup(names->map, memory, address, owner))
		return false;
	if (owner->stub_kind[0]) {
		stub_name(names, memory, owner, name, size);
		return true;
	}
	return method_name(names, memory, owner, name, size);
}

bool runtime_names_lookup(struct runtime_names *names, struct target_memory *memory,
			  uint64_t address, char *name, size_t size, struct code_owner *owner)
{
	char runtime_name[MAX_RUNTIME_NAME];

	if (!runtime_names_runtime_name(names, memory, address, runtime_name, sizeof(runtime_name),
					owner))
		return false;
	if (owner->stub_kind[0]) { /* as the outputs show stubs */
		snprintf(name, size, "[stub] %s", runtime_name + strlen("stub "));
		return true;
	}

	char *readable = managed_name_readable(runtime_name, false);

	if (!readable)
		return false;
	snprintf(name, size, "%s", readable);
	free(readable);
	return true;
}
