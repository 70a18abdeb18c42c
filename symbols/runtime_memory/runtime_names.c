#include "runtime_names.h"

#include "managed_images.h"
#include "managed_name.h"
#include "managed_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct runtime_names {
	struct code_map *map;
	struct managed_images *images;
};

struct runtime_names *runtime_names_new(const struct contract_descriptor *descriptor, int root_fd,
					char *error, size_t error_size)
{
	struct runtime_names *names = calloc(1, sizeof(*names));

	if (!names) {
		snprintf(error, error_size, "out of memory");
		return NULL;
	}
	names->map = code_map_new(descriptor, error, error_size);
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

/* The runtime's name of the method `owner` holds (code_map.h). */
static bool method_name(struct runtime_names *names, const struct code_owner *owner, char *name,
			size_t size)
{
	struct managed_image *image;

	if (owner->dynamic_name[0])
		return dynamic_method_name(names, owner, name, size);
	return owner->token && owner->module_path[0] &&
	       (image = managed_images_get(names->images, owner->module_path)) &&
	       managed_image_method_def_name(image, owner->token, name, size);
}

/* A stub's name as the runtime's perf map writes stubs' ("stub KIND"),
 * with the method it leads to made readable: "stub FixupPrecode for
 * hotloop!Demo.Program::HotMethod". */
static void stub_name(struct runtime_names *names, const struct code_owner *owner, char *name,
		      size_t size)
{
	char method[1024];
	char *readable = method_name(names, owner, method, sizeof(method))
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
		stub_name(names, owner, name, size);
		return true;
	}
	return method_name(names, owner, name, size);
}

bool runtime_names_lookup(struct runtime_names *names, struct target_memory *memory,
			  uint64_t address, char *name, size_t size, struct code_owner *owner)
{
	char runtime_name[1024];

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
