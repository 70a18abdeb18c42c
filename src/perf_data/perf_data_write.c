/* The perf.data writer. Layout: file header, the events' ids, their attrs,
 * the data section, then the feature sections. The header and attr are written
 * at creation (with a zero data size, which readers take as "to the end of
 * the file") and rewritten with the real sizes at the end. */
#include "perf_data.h"

#include "perf_data_compressor.h"
#include "perf_data_features.h"
#include "perf_data_format.h"
#include "perf_event_names.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Bytes gathered before one write(2). */
#define WRITE_BUFFER_SIZE (256 * 1024)
/* perf record -z's default level: fast enough for the sampling loop. */
#define COMPRESSION_LEVEL 1

enum { OWNED_STRING_COUNT = 7 };

struct perf_data_writer {
	int fd;
	int write_error; /* errno of the first failed write, 0 until then */
	struct perf_event_attr attr;
	struct perf_data_info info; /* every string set, owned in owned_strings */
	char *owned_strings[OWNED_STRING_COUNT];
	uint64_t *event_ids;
	struct perf_data_extra_event *more_events; /* copies, with their names and ids */
	uint8_t *tracing_data;
	uint64_t data_offset;
	uint64_t data_end; /* the file holds complete records up to here */
	/* A file as big as the feature sections, made at the start and removed
	 * at the end: on a full disk, removing it makes room for them (perf
	 * cannot read a compressed capture without them). NULL when the disk
	 * had no room for it even then. */
	char *reserve_path;
	uint8_t *buffer; /* records (or compressed records) not yet written */
	size_t buffer_used;
	struct perf_data_compressor *compressor; /* NULL for a plain file */
	uint64_t uncompressed_bytes, compressed_bytes;
};

static const char *own_string(struct perf_data_writer *writer, size_t slot, const char *value,
			      const char *fallback)
{
	writer->owned_strings[slot] = xstrdup(value ? value : fallback);
	return writer->owned_strings[slot];
}

static uint64_t *copy_ids(const uint64_t *ids, size_t count)
{
	uint64_t *copy = xmalloc((count + 1) * sizeof(uint64_t));

	if (count)
		memcpy(copy, ids, count * sizeof(uint64_t));
	return copy;
}

/* One moment on both clocks: the samples' clock read between two reads of
 * the wall clock, taken at their middle. */
static void read_clock_moment(struct perf_data_info *info, clockid_t samples_clock)
{
	uint64_t before = clock_nanoseconds(CLOCK_REALTIME);

	info->clockid_time_ns = clock_nanoseconds(samples_clock);
	info->wall_clock_ns = before + (clock_nanoseconds(CLOCK_REALTIME) - before) / 2;
}

static void copy_info(struct perf_data_writer *writer, const struct perf_data_info *info)
{
	static const struct perf_data_info none;
	const char *event_name = perf_event_name_from_attr(&writer->attr);
	struct utsname system = {0};
	long online = sysconf(_SC_NPROCESSORS_ONLN), configured = sysconf(_SC_NPROCESSORS_CONF);

	if (!info)
		info = &none;
	uname(&system);
	writer->info = *info;
	writer->info.event_name =
	    own_string(writer, 0, info->event_name, event_name ? event_name : "unknown");
	writer->info.hostname = own_string(writer, 1, info->hostname, system.nodename);
	writer->info.os_release = own_string(writer, 2, info->os_release, system.release);
	writer->info.arch = own_string(writer, 3, info->arch, system.machine);
	writer->info.perf_version =
	    own_string(writer, 4, info->perf_version, "profcpu " PROFCPU_VERSION);
	writer->info.command_line = own_string(writer, 5, info->command_line, "profcpu");
	if (!info->cpus_online)
		writer->info.cpus_online = online > 0 ? (uint32_t)online : 1;
	if (!info->cpus_available)
		writer->info.cpus_available = configured > 0 ? (uint32_t)configured : 1;
	if (!info->wall_clock_ns && writer->attr.use_clockid)
		read_clock_moment(&writer->info, (clockid_t)writer->attr.clockid);
	writer->event_ids = copy_ids(info->event_ids, info->event_id_count);
	writer->info.event_ids = writer->event_ids;
	writer->more_events = xcalloc(info->more_event_count + 1, sizeof(*writer->more_events));
	for (size_t i = 0; i < info->more_event_count; i++) {
		struct perf_data_extra_event *copy = &writer->more_events[i];

		*copy = info->more_events[i];
		copy->attr.size = sizeof(copy->attr);
		copy->name = xstrdup(copy->name);
		copy->ids = copy_ids(copy->ids, copy->id_count);
	}
	writer->info.more_events = writer->more_events;
	writer->tracing_data = xmalloc(info->tracing_data_size + 1);
	if (info->tracing_data_size)
		memcpy(writer->tracing_data, info->tracing_data, info->tracing_data_size);
	writer->info.tracing_data = info->tracing_data ? writer->tracing_data : NULL;
}

/* Writes `size` bytes at `offset`. Returns how many were written: fewer,
 * with errno set, on failure. */
static size_t write_at(int fd, const void *bytes, size_t size, uint64_t offset)
{
	size_t done = 0;

	while (done < size) {
		ssize_t written =
		    pwrite(fd, (const char *)bytes + done, size - done, (off_t)(offset + done));

		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0) {
			if (written == 0)
				errno = EIO;
			break;
		}
		done += (size_t)written;
	}
	return done;
}

/* Bytes before the data section: header, every event's ids, the attrs. */
static uint64_t header_size(const struct perf_data_info *info)
{
	uint64_t size = sizeof(struct perf_file_header) +
			(1 + info->more_event_count) *
			    (sizeof(struct perf_event_attr) + sizeof(struct perf_file_section));

	size += info->event_id_count * sizeof(uint64_t);
	for (size_t i = 0; i < info->more_event_count; i++)
		size += info->more_events[i].id_count * sizeof(uint64_t);
	return size;
}

/* Header, ids and attrs, as one write at the start of the file. */
static int write_header(struct perf_data_writer *writer, const uint64_t features[4])
{
	size_t event_count = 1 + writer->info.more_event_count;
	size_t attr_size = sizeof(writer->attr) + sizeof(struct perf_file_section);
	size_t attrs_size = event_count * attr_size;
	struct perf_file_header header = {
	    .magic = PERF_DATA_MAGIC,
	    .size = sizeof(header),
	    .attr_size = attr_size,
	    .attrs = {writer->data_offset - attrs_size, attrs_size},
	    .data = {writer->data_offset, writer->data_end - writer->data_offset},
	};
	uint8_t *bytes = xcalloc(1, writer->data_offset);
	size_t ids_end = sizeof(header), written;

	memcpy(header.features, features, sizeof(header.features));
	memcpy(bytes, &header, sizeof(header));
	for (size_t i = 0; i < event_count; i++) {
		const struct perf_event_attr *attr =
		    i ? &writer->more_events[i - 1].attr : &writer->attr;
		const uint64_t *event_ids = i ? writer->more_events[i - 1].ids : writer->event_ids;
		size_t id_count =
		    i ? writer->more_events[i - 1].id_count : writer->info.event_id_count;
		struct perf_file_section ids = {ids_end, id_count * sizeof(uint64_t)};
		uint8_t *entry = bytes + header.attrs.offset + i * attr_size;

		if (ids.size)
			memcpy(bytes + ids_end, event_ids, ids.size);
		ids_end += ids.size;
		memcpy(entry, attr, sizeof(*attr));
		memcpy(entry + sizeof(*attr), &ids, sizeof(ids));
	}
	written = write_at(writer->fd, bytes, writer->data_offset, 0);
	free(bytes);
	return written == writer->data_offset ? 0 : -1;
}

/* How many leading bytes of `bytes` are whole records. */
static size_t complete_records_size(const uint8_t *bytes, size_t size)
{
	size_t end = 0;
	struct perf_event_header header;

	while (size - end >= sizeof(header)) {
		memcpy(&header, bytes + end, sizeof(header));
		if (header.size > size - end)
			break;
		end += header.size;
	}
	return end;
}

static int fail(struct perf_data_writer *writer, int error)
{
	writer->write_error = error;
	errno = error;
	return -1;
}

/* Writes the buffer. On failure the data section keeps the records that
 * were written whole. */
static int flush_buffer(struct perf_data_writer *writer)
{
	size_t written =
	    write_at(writer->fd, writer->buffer, writer->buffer_used, writer->data_end);
	int error = errno;

	if (written == writer->buffer_used) {
		writer->data_end += written;
		writer->buffer_used = 0;
		return 0;
	}
	writer->data_end += complete_records_size(writer->buffer, written);
	writer->buffer_used = 0;
	return fail(writer, error);
}

static int compress_chunk(struct perf_data_writer *writer)
{
	size_t pending = perf_data_compressor_pending(writer->compressor), size;

	if (!pending)
		return 0;
	if (WRITE_BUFFER_SIZE - writer->buffer_used < PERF_DATA_COMPRESSED_RECORD_ROOM &&
	    flush_buffer(writer) < 0)
		return -1;
	size =
	    perf_data_compressor_compress(writer->compressor, writer->buffer + writer->buffer_used);
	if (!size)
		return fail(writer, EIO);
	writer->buffer_used += size;
	writer->uncompressed_bytes += pending;
	writer->compressed_bytes += size;
	return 0;
}

/* Chunks hold whole records when they can, so that a file cut short by a
 * write error ends on a record boundary; a record larger than a chunk
 * spans two, which perf's reader accepts. */
static int add_to_chunk(struct perf_data_writer *writer, const uint8_t *record, size_t size)
{
	if (size > PERF_DATA_COMPRESSION_CHUNK - perf_data_compressor_pending(writer->compressor) &&
	    compress_chunk(writer) < 0)
		return -1;
	while (size) {
		size_t room = PERF_DATA_COMPRESSION_CHUNK -
			      perf_data_compressor_pending(writer->compressor),
		       part = size < room ? size : room;

		perf_data_compressor_add(writer->compressor, record, part);
		record += part;
		size -= part;
		if (part == room && compress_chunk(writer) < 0)
			return -1;
	}
	return 0;
}

/* The feature sections as they will be written, laid out now for their
 * size: only the compression ratio changes later, in a fixed-size field. */
static size_t features_size(struct perf_data_writer *writer)
{
	struct perf_compressed_description compression = {0};
	struct perf_data_features features;
	size_t size;

	perf_data_features_build(&features, writer->data_offset, &writer->attr, &writer->info,
				 writer->compressor ? &compression : NULL);
	size = features.size;
	perf_data_features_free(&features);
	return size;
}

/* Makes PATH.reserve as big as the feature sections, in real blocks. */
static void make_reserve(struct perf_data_writer *writer, const char *path)
{
	int fd;

	writer->reserve_path = xasprintf("%s.reserve", path);
	fd =
	    open(writer->reserve_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && posix_fallocate(fd, 0, (off_t)features_size(writer)) == 0) {
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	unlink(writer->reserve_path);
	free(writer->reserve_path);
	writer->reserve_path = NULL;
}

static void free_writer(struct perf_data_writer *writer)
{
	for (size_t i = 0; i < OWNED_STRING_COUNT; i++)
		free(writer->owned_strings[i]);
	free(writer->event_ids);
	for (size_t i = 0; i < writer->info.more_event_count; i++) {
		free((char *)writer->more_events[i].name);
		free((uint64_t *)writer->more_events[i].ids);
	}
	free(writer->more_events);
	free(writer->tracing_data);
	free(writer->buffer);
	perf_data_compressor_free(writer->compressor);
	if (writer->reserve_path)
		unlink(writer->reserve_path);
	free(writer->reserve_path);
	free(writer);
}

struct perf_data_writer *perf_data_writer_create(const char *path,
						 const struct perf_event_attr *attr,
						 const struct perf_data_info *info, bool compress)
{
	static const uint64_t no_features[4];
	struct perf_data_writer *writer = xcalloc(1, sizeof(*writer));
	int error;

	writer->fd = -1;
	writer->attr = *attr;
	writer->attr.size = sizeof(writer->attr);
	copy_info(writer, info);
	writer->data_offset = header_size(&writer->info);
	writer->data_end = writer->data_offset;
	writer->buffer = xmalloc(WRITE_BUFFER_SIZE);
	if (compress) {
		writer->compressor = perf_data_compressor_create(COMPRESSION_LEVEL);
		if (!writer->compressor) {
			free_writer(writer);
			errno = ENOMEM;
			return NULL;
		}
	}
	/* A link planted where perf.data goes is not followed (profcpu writes
	 * as root). */
	writer->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (writer->fd < 0 || write_header(writer, no_features) < 0) {
		error = errno;
		if (writer->fd >= 0)
			close(writer->fd);
		free_writer(writer);
		errno = error;
		return NULL;
	}
	make_reserve(writer, path);
	return writer;
}

int perf_data_writer_add(struct perf_data_writer *writer, const struct perf_event_header *record)
{
	size_t size = record->size;

	if (writer->write_error) {
		errno = writer->write_error;
		return -1;
	}
	if (size < sizeof(*record)) {
		errno = EINVAL;
		return -1;
	}
	if (writer->compressor)
		return add_to_chunk(writer, (const uint8_t *)record, size);
	if (size > WRITE_BUFFER_SIZE - writer->buffer_used && flush_buffer(writer) < 0)
		return -1;
	memcpy(writer->buffer + writer->buffer_used, record, size);
	writer->buffer_used += size;
	return 0;
}

int perf_data_writer_flush(struct perf_data_writer *writer)
{
	if (writer->write_error) {
		errno = writer->write_error;
		return -1;
	}
	if (writer->compressor && compress_chunk(writer) < 0)
		return -1;
	return flush_buffer(writer);
}

static struct perf_compressed_description describe_compression(struct perf_data_writer *writer)
{
	struct perf_compressed_description description = {
	    .type = PERF_COMPRESSION_ZSTD,
	    .level = COMPRESSION_LEVEL,
	    .mmap_len = PERF_DATA_COMPRESSION_CHUNK,
	};

	if (writer->compressed_bytes)
		description.ratio =
		    (uint32_t)((writer->uncompressed_bytes + writer->compressed_bytes / 2) /
			       writer->compressed_bytes);
	return description;
}

int perf_data_writer_finish(struct perf_data_writer *writer)
{
	struct perf_compressed_description compression;
	struct perf_data_features features;
	int error;

	perf_data_writer_flush(writer);
	error = writer->write_error;
	/* A failed write may have left part of a record past data_end. */
	if (ftruncate(writer->fd, (off_t)writer->data_end) < 0 && !error)
		error = errno;
	/* Its blocks are the room the feature sections need on a full disk. */
	if (writer->reserve_path && unlink(writer->reserve_path) == 0) {
		free(writer->reserve_path);
		writer->reserve_path = NULL;
	}
	compression = describe_compression(writer);
	perf_data_features_build(&features, writer->data_end, &writer->attr, &writer->info,
				 writer->compressor ? &compression : NULL);
	if (write_at(writer->fd, features.bytes, features.size, writer->data_end) !=
	    features.size) {
		/* Without its feature sections the file is still readable. */
		if (!error)
			error = errno;
		memset(features.bitmap, 0, sizeof(features.bitmap));
		if (ftruncate(writer->fd, (off_t)writer->data_end) < 0)
			error = error ? error : errno;
	}
	if (write_header(writer, features.bitmap) < 0 && !error)
		error = errno;
	if (close(writer->fd) < 0 && !error)
		error = errno;
	perf_data_features_free(&features);
	free_writer(writer);
	if (error) {
		errno = error;
		return -1;
	}
	return 0;
}
