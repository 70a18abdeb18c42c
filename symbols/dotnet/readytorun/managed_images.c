#include "managed_images.h"
#include "buffer.h"
#include "bundle_manifest.h"
#include "target_file.h"
#include "symbols_log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_IMAGES 4096 /* a bound for a hostile capture with endless paths */
/* Images that keep their file open to read it as lookups need; later ones
 * are read at once and closed (a bound on descriptors). */
#define MAX_OPEN_IMAGES 256

struct cached_image {
	char *path;
	struct managed_image *image;	/* NULL: not an assembly */
	struct bundle_manifest *bundle; /* a single-file app's executable: its files */
	bool owned;			/* false for a path sharing another's image */
	struct managed_images *images;
};

struct managed_images {
	int root_fd;
	struct cached_image **cached; /* each alone: images keep a pointer to theirs */
	size_t count, capacity;
	size_t opened; /* with keep_open */
	size_t lookups, named;
};

struct managed_images *managed_images_new(int root_fd)
{
	struct managed_images *images = calloc(1, sizeof(*images));

	if (images)
		images->root_fd = root_fd;
	return images;
}

void managed_images_free(struct managed_images *images)
{
	if (!images)
		return;
	for (size_t i = 0; i < images->count; i++) {
		if (images->cached[i]->owned)
			managed_image_free(images->cached[i]->image);
		if (images->cached[i]->bundle)
			bundle_manifest_free(images->cached[i]->bundle);
		free(images->cached[i]->bundle);
		free(images->cached[i]->path);
		free(images->cached[i]);
	}
	free(images->cached);
	free(images);
}

static bool same_identity(const struct managed_image *a, const struct managed_image *b)
{
	uint32_t a_timestamp, b_timestamp;
	uint8_t a_mvid[16], b_mvid[16];
	uint64_t a_size, b_size;

	managed_image_identity(a, &a_timestamp, a_mvid, &a_size);
	managed_image_identity(b, &b_timestamp, b_mvid, &b_size);
	return a_timestamp == b_timestamp && a_size == b_size && !memcmp(a_mvid, b_mvid, 16);
}

/* The other assembly `name` of a signature: the file "<name>.dll" in the
 * folder of the image that asks. */
static const struct clr_metadata *find_assembly(void *context, const char *name)
{
	struct cached_image *asking = context;
	const char *slash = strrchr(asking->path, '/');
	struct managed_image *image;
	char path[4096];

	if (!slash || strchr(name, '/') ||
	    snprintf(path, sizeof(path), "%.*s/%s.dll", (int)(slash - asking->path), asking->path,
		     name) >= (int)sizeof(path))
		return NULL;
	image = managed_images_get(asking->images, path);
	return image ? managed_image_metadata(image) : NULL;
}

/* A read image, or the one already read with the same build identity. */
static struct managed_image *share_identical(struct managed_images *images,
					     struct cached_image *entry)
{
	for (size_t i = 0; i < images->count; i++) {
		struct cached_image *other = images->cached[i];

		if (other != entry && other->owned && other->image &&
		    same_identity(other->image, entry->image)) {
			managed_image_free(entry->image);
			entry->owned = false;
			return entry->image = other->image;
		}
	}
	managed_image_set_assembly_finder(entry->image, find_assembly, entry);
	return entry->image;
}

static struct cached_image *cached_entry(struct managed_images *images, const char *path);

/* The file at `path` when it is "EXECUTABLE/NAME" and EXECUTABLE a
 * single-file app read before that stores NAME, or NULL; its executable's
 * path in `executable`. */
static const struct bundle_entry *stored_file(const struct managed_images *images, const char *path,
					      const char **executable)
{
	for (size_t i = 0; i < images->count; i++) {
		const struct cached_image *bundle = images->cached[i];
		size_t length = strlen(bundle->path);
		const struct bundle_entry *entry;

		if (bundle->bundle && !strncmp(path, bundle->path, length) && path[length] == '/' &&
		    (entry = bundle_manifest_find(bundle->bundle, path + length + 1)) &&
		    entry->type == BUNDLE_TYPE_ASSEMBLY) {
			*executable = bundle->path;
			return entry;
		}
	}
	return NULL;
}

/* stored_file() for a path no file is at (the capture names a copy the
 * runtime made of a compressed assembly so, copied_images.h): the nearest
 * folder of `path` that is a file, read first as the executable. */
static const struct bundle_entry *stored_in_file_above(struct managed_images *images,
						       const char *path, const char **executable)
{
	char *above = strdup(path), *slash;
	const struct bundle_entry *stored = NULL;
	int fd;

	while (above && (slash = strrchr(above, '/')) && slash != above) {
		*slash = '\0';
		if ((fd = target_file_open(images->root_fd, above, 0)) < 0)
			continue;
		close(fd);
		if (cached_entry(images, above))
			stored = stored_file(images, path, executable);
		break;
	}
	free(above);
	return stored;
}

/* The assembly `stored` in the single-file app `executable`: read where it
 * lies in the executable, or inflated whole when it is compressed. */
static struct managed_image *open_stored(const struct managed_images *images,
					 const char *executable, const struct bundle_entry *stored,
					 bool keep_open)
{
	uint8_t *bytes;
	size_t size;
	int fd;

	if (!stored->compressed_size)
		return managed_image_open_embedded(images->root_fd, executable, stored->offset,
						   stored->size, keep_open);
	if (stored->size > MANAGED_IMAGE_MAX_SIZE ||
	    (fd = target_file_open(images->root_fd, executable, 0)) < 0)
		return NULL;
	bytes = bundle_entry_read(fd, stored, stored->size, &size);
	close(fd);
	return bytes ? managed_image_from_bytes(bytes, size) : NULL;
}

/* Reads what `entry` names: an assembly, one stored in a single-file app,
 * or a single-file app's executable (its manifest). */
static void read_entry(struct managed_images *images, struct cached_image *entry)
{
	bool keep_open = images->opened < MAX_OPEN_IMAGES;
	const struct bundle_entry *stored;
	const char *executable;
	int fd = -1;

	if (!(stored = stored_file(images, entry->path, &executable)) &&
	    (fd = target_file_open(images->root_fd, entry->path, 0)) < 0)
		stored = stored_in_file_above(images, entry->path, &executable);
	if (stored)
		entry->image = open_stored(images, executable, stored, keep_open);
	else if (fd >= 0)
		entry->image = managed_image_open(images->root_fd, entry->path, keep_open);
	images->opened += entry->image != NULL;
	if (fd >= 0 && !entry->image && (entry->bundle = malloc(sizeof(*entry->bundle))) &&
	    !bundle_manifest_read(fd, entry->bundle)) {
		free(entry->bundle);
		entry->bundle = NULL;
	}
	if (fd >= 0)
		close(fd);
}

struct managed_image *managed_images_get(struct managed_images *images, const char *path)
{
	struct cached_image *entry;

	for (size_t i = 0; i < images->count; i++)
		if (!strcmp(images->cached[i]->path, path))
			return images->cached[i]->image;
	if (images->count == MAX_IMAGES ||
	    !buffer_reserve((void **)&images->cached, &images->capacity, images->count + 1,
			    sizeof(*images->cached)) ||
	    !(entry = calloc(1, sizeof(*entry))))
		return NULL;
	if (!(entry->path = strdup(path))) {
		free(entry);
		return NULL;
	}
	entry->images = images;
	entry->owned = true;
	/* Listed even when it is not an assembly: it is not read again. */
	images->cached[images->count++] = entry;
	read_entry(images, entry);
	return entry->image ? share_identical(images, entry) : NULL;
}

/* The cached entry of `path`, read if it was not. */
static struct cached_image *cached_entry(struct managed_images *images, const char *path)
{
	managed_images_get(images, path);
	for (size_t i = 0; i < images->count; i++)
		if (!strcmp(images->cached[i]->path, path))
			return images->cached[i];
	return NULL;
}

/* The image that holds the byte at `*file_offset` of the file at `path`:
 * that file's, or the assembly a single-file app's executable stores
 * there, `*file_offset` then made an offset in that assembly. */
static struct managed_image *image_at(struct managed_images *images, const char *path,
				      uint64_t *file_offset)
{
	struct cached_image *entry = cached_entry(images, path);
	const struct bundle_entry *stored;
	struct managed_image *image;
	char *inner;

	if (!entry || entry->image || !entry->bundle)
		return entry ? entry->image : NULL;
	if (!(stored = bundle_manifest_assembly_at(entry->bundle, *file_offset)) ||
	    asprintf(&inner, "%s/%s", path, stored->path) < 0)
		return NULL;
	image = managed_images_get(images, inner);
	free(inner);
	*file_offset -= stored->offset;
	return image;
}

bool managed_images_lookup(struct managed_images *images, const char *path, uint64_t file_offset,
			   const char **name, uint64_t *offset)
{
	struct managed_image *image = image_at(images, path, &file_offset);

	if (!image || !managed_image_has_native_code(image))
		return false;
	images->lookups++;
	if (!managed_image_lookup(image, file_offset, name, offset))
		return false;
	images->named++;
	return true;
}

bool managed_images_lines_assembly(struct managed_images *images, const char *path,
				   uint64_t file_offset, char *assembly, size_t size)
{
	struct cached_image *entry = cached_entry(images, path);
	const struct bundle_entry *stored;
	const char *component = NULL, *slash;
	char inner[4096];
	int length;

	/* Code of an assembly a single-file app stores: that assembly's,
	 * EXECUTABLE/NAME. */
	if (entry && !entry->image && entry->bundle &&
	    (stored = bundle_manifest_assembly_at(entry->bundle, file_offset))) {
		if (snprintf(inner, sizeof(inner), "%s/%s", path, stored->path) >=
		    (int)sizeof(inner))
			return false;
		path = inner;
		file_offset -= stored->offset;
		entry = cached_entry(images, path);
	}
	if (entry && entry->image)
		component = managed_image_component_at(entry->image, file_offset);
	slash = strrchr(path, '/');
	if (!component || !slash)
		length = snprintf(assembly, size, "%s", path);
	else
		length =
		    snprintf(assembly, size, "%.*s/%s.dll", (int)(slash - path), path, component);
	return length >= 0 && (size_t)length < size;
}

bool managed_images_il_offset(struct managed_images *images, const char *path, uint64_t file_offset,
			      uint32_t *method_token, uint32_t *il_offset)
{
	struct managed_image *image = image_at(images, path, &file_offset);

	return image && managed_image_has_native_code(image) &&
	       managed_image_il_offset(image, file_offset, method_token, il_offset);
}

bool managed_images_unwind_at(struct managed_images *images, const char *path, uint64_t file_offset,
			      struct windows_unwind_code_at *unwind)
{
	struct managed_image *image = image_at(images, path, &file_offset);

	return image && managed_image_unwind_at(image, file_offset, unwind);
}

void managed_images_report(const struct managed_images *images, FILE *log)
{
	size_t with_code = 0;

	if (!images || images->lookups == 0)
		return;
	for (size_t i = 0; i < images->count; i++)
		if (images->cached[i]->owned && images->cached[i]->image &&
		    managed_image_has_native_code(images->cached[i]->image))
			with_code++;
	symbols_log(log,
		    "ReadyToRun: %zu precompiled .NET images read, %zu of %zu addresses in them "
		    "named from the images",
		    with_code, images->named, images->lookups);
}
