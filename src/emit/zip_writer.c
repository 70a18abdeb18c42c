#include "zip_writer.h"
#include "deflate_stream.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COPY_SIZE (1u << 20) /* a stored member's bytes per read and write */
#define MAX_32	  0xffffffffu
#define MAX_16	  0xffffu

#define LOCAL_HEADER_SIZE   30
#define CENTRAL_HEADER_SIZE 46
#define END_SIZE	    22
#define ZIP64_END_SIZE	    56
#define ZIP64_LOCATOR_SIZE  20
#define ZIP64_EXTRA_ID	    0x0001
/* Made on Unix (3), zip 2.0; zip64 needs 4.5 to read. */
#define MADE_BY	       (3 << 8 | 20)
#define NEEDS	       20
#define NEEDS_ZIP64    45
#define METHOD_STORED  0
#define METHOD_DEFLATE 8

struct zip_member {
	char *name;
	uint16_t method, time, date;
	uint32_t crc, mode;
	uint64_t size, compressed_size, offset;
	bool zip64_sizes; /* its local header carries zip64 sizes */
};

struct zip_writer {
	int fd;
	uint64_t offset; /* bytes written */
	struct zip_member *members;
	size_t count, capacity;
};

static uint8_t *put16(uint8_t *at, uint16_t value)
{
	at[0] = (uint8_t)value;
	at[1] = (uint8_t)(value >> 8);
	return at + 2;
}

static uint8_t *put32(uint8_t *at, uint32_t value)
{
	return put16(put16(at, (uint16_t)value), (uint16_t)(value >> 16));
}

static uint8_t *put64(uint8_t *at, uint64_t value)
{
	return put32(put32(at, (uint32_t)value), (uint32_t)(value >> 32));
}

static uint32_t clamp32(uint64_t value)
{
	return value >= MAX_32 ? MAX_32 : (uint32_t)value;
}

static int write_bytes(void *context, const void *bytes, size_t size)
{
	struct zip_writer *zip = context;

	zip->offset += size;
	return write_whole(zip->fd, bytes, size);
}

struct zip_writer *zip_writer_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	struct zip_writer *zip;

	if (fd < 0)
		return NULL;
	zip = xcalloc(1, sizeof(*zip));
	zip->fd = fd;
	return zip;
}

/* MS-DOS time and date, as zip keeps them (local time, 2 s steps). */
static void dos_time(time_t when, uint16_t *time, uint16_t *date)
{
	struct tm local;

	localtime_r(&when, &local);
	if (local.tm_year < 80)
		local = (struct tm){.tm_year = 80, .tm_mday = 1};
	*time = (uint16_t)(local.tm_hour << 11 | local.tm_min << 5 | local.tm_sec / 2);
	*date = (uint16_t)((local.tm_year - 80) << 9 | (local.tm_mon + 1) << 5 | local.tm_mday);
}

static int write_local_header(struct zip_writer *zip, const struct zip_member *member)
{
	size_t name_length = strlen(member->name);
	uint8_t header[LOCAL_HEADER_SIZE + 20], *at = header;

	at = put32(at, 0x04034b50);
	at = put16(at, member->zip64_sizes ? NEEDS_ZIP64 : NEEDS);
	at = put16(at, 0); /* flags */
	at = put16(at, member->method);
	at = put16(at, member->time);
	at = put16(at, member->date);
	at = put32(at, 0); /* CRC-32 and sizes: filled in after the data */
	at = put32(at, member->zip64_sizes ? MAX_32 : 0);
	at = put32(at, member->zip64_sizes ? MAX_32 : 0);
	at = put16(at, (uint16_t)name_length);
	at = put16(at, member->zip64_sizes ? 20 : 0);
	if (write_bytes(zip, header, (size_t)(at - header)) < 0 ||
	    write_bytes(zip, member->name, name_length) < 0)
		return -1;
	if (!member->zip64_sizes)
		return 0;
	at = put16(put16(header, ZIP64_EXTRA_ID), 16);
	at = put64(put64(at, 0), 0);
	return write_bytes(zip, header, (size_t)(at - header));
}

/* The CRC-32 and sizes, into the local header written before the data. */
static int complete_local_header(struct zip_writer *zip, const struct zip_member *member)
{
	uint8_t fields[16];
	off_t at = (off_t)member->offset + 14;

	put32(fields, member->crc);
	if (!member->zip64_sizes) {
		put32(put32(fields + 4, (uint32_t)member->compressed_size), (uint32_t)member->size);
		return pwrite(zip->fd, fields, 12, at) == 12 ? 0 : -1;
	}
	if (pwrite(zip->fd, fields, 4, at) != 4)
		return -1;
	put64(put64(fields, member->size), member->compressed_size);
	/* The zip64 extra field's values, after the name and the field's id
	 * and length. */
	at = (off_t)(member->offset + LOCAL_HEADER_SIZE + strlen(member->name) + 4);
	return pwrite(zip->fd, fields, 16, at) == 16 ? 0 : -1;
}

/* Reads the file at `fd` to its end into the zip: through `deflater`, or
 * as it is when that is NULL (its size and CRC-32 counted here). */
static int copy_file(struct zip_writer *zip, int fd, struct deflate_stream *deflater,
		     struct zip_member *member)
{
	uint8_t *buffer = xmalloc(COPY_SIZE);
	ssize_t length;
	int status = 0;

	while (status == 0 && (length = read(fd, buffer, COPY_SIZE)) != 0) {
		if (length < 0 && errno == EINTR)
			continue;
		if (length < 0) {
			status = -1;
			break;
		}
		if (deflater) {
			status = deflate_stream_write(deflater, buffer, (size_t)length);
			continue;
		}
		member->crc = crc32_gzip_refl(member->crc, buffer, (uint64_t)length);
		member->size += (uint64_t)length;
		status = write_bytes(zip, buffer, (size_t)length);
	}
	free(buffer);
	return status;
}

static int copy_stored(struct zip_writer *zip, int fd, struct zip_member *member)
{
	int status = copy_file(zip, fd, NULL, member);

	member->compressed_size = member->size;
	return status;
}

static int copy_deflated(struct zip_writer *zip, int fd, struct zip_member *member)
{
	struct deflate_stream *deflater = xmalloc(sizeof(*deflater));
	uint64_t start = zip->offset;
	int status, error;

	deflate_stream_start(deflater, false, write_bytes, zip);
	status = copy_file(zip, fd, deflater, member);
	error = errno;
	if (deflate_stream_finish(deflater) < 0)
		status = -1;
	else
		errno = error;
	member->crc = deflater->crc;
	member->size = deflater->size;
	member->compressed_size = zip->offset - start;
	free(deflater);
	return status;
}

int zip_writer_add(struct zip_writer *zip, const char *name, int fd, const struct stat *status,
		   bool store)
{
	struct zip_member *member;

	if (zip->count == zip->capacity) {
		zip->capacity = zip->capacity ? 2 * zip->capacity : 16;
		zip->members = xrealloc(zip->members, zip->capacity * sizeof(*zip->members));
	}
	member = &zip->members[zip->count];
	*member = (struct zip_member){
	    .name = xstrdup(name),
	    .method = store ? METHOD_STORED : METHOD_DEFLATE,
	    .mode = (uint32_t)status->st_mode,
	    .offset = zip->offset,
	    /* Deflated, a file just under 4 GiB may grow past: zip64 then
	     * too. */
	    .zip64_sizes = (uint64_t)status->st_size >= MAX_32 - MAX_32 / 64,
	};
	zip->count++;
	dos_time(status->st_mtime, &member->time, &member->date);
	if (write_local_header(zip, member) < 0 ||
	    (store ? copy_stored(zip, fd, member) : copy_deflated(zip, fd, member)) < 0)
		return -1;
	if (!member->zip64_sizes && (member->size >= MAX_32 || member->compressed_size >= MAX_32)) {
		errno = EFBIG; /* the file grew past 4 GiB while it was read */
		return -1;
	}
	return complete_local_header(zip, member);
}

/* One member's central directory entry, into `entry` (room for
 * CENTRAL_HEADER_SIZE + 28 bytes and the name); its length. */
static size_t central_entry(const struct zip_member *member, uint8_t *entry)
{
	bool offset64 = member->offset >= MAX_32, zip64 = member->zip64_sizes || offset64;
	size_t name_length = strlen(member->name);
	uint16_t extra = (uint16_t)((member->zip64_sizes ? 16 : 0) + (offset64 ? 8 : 0));
	uint8_t *at = entry;

	at = put32(at, 0x02014b50);
	at = put16(at, MADE_BY);
	at = put16(at, zip64 ? NEEDS_ZIP64 : NEEDS);
	at = put16(at, 0); /* flags */
	at = put16(at, member->method);
	at = put16(at, member->time);
	at = put16(at, member->date);
	at = put32(at, member->crc);
	at = put32(at, member->zip64_sizes ? MAX_32 : (uint32_t)member->compressed_size);
	at = put32(at, member->zip64_sizes ? MAX_32 : (uint32_t)member->size);
	at = put16(at, (uint16_t)name_length);
	at = put16(at, extra ? (uint16_t)(extra + 4) : 0);
	at = put16(at, 0);		    /* comment */
	at = put16(at, 0);		    /* disk */
	at = put16(at, 0);		    /* internal attributes */
	at = put32(at, member->mode << 16); /* Unix permissions */
	at = put32(at, clamp32(member->offset));
	memcpy(at, member->name, name_length);
	at += name_length;
	if (extra) {
		at = put16(put16(at, ZIP64_EXTRA_ID), extra);
		if (member->zip64_sizes)
			at = put64(put64(at, member->size), member->compressed_size);
		if (offset64)
			at = put64(at, member->offset);
	}
	return (size_t)(at - entry);
}

static int write_central_directory(struct zip_writer *zip)
{
	uint64_t start = zip->offset, size;
	uint8_t end[ZIP64_END_SIZE + ZIP64_LOCATOR_SIZE + END_SIZE], *at = end;
	int status = 0;

	for (size_t i = 0; status == 0 && i < zip->count; i++) {
		size_t name_length = strlen(zip->members[i].name);
		uint8_t *entry = xmalloc(CENTRAL_HEADER_SIZE + 28 + name_length);

		status = write_bytes(zip, entry, central_entry(&zip->members[i], entry));
		free(entry);
	}
	if (status < 0)
		return -1;
	size = zip->offset - start;
	if (zip->count >= MAX_16 || start >= MAX_32 || size >= MAX_32) {
		uint64_t zip64_end = zip->offset;

		at = put32(at, 0x06064b50);
		at = put64(at, ZIP64_END_SIZE - 12);
		at = put16(at, MADE_BY);
		at = put16(at, NEEDS_ZIP64);
		at = put32(put32(at, 0), 0); /* this disk, the directory's */
		at = put64(put64(at, zip->count), zip->count);
		at = put64(put64(at, size), start);
		at = put32(at, 0x07064b50);
		at = put32(at, 0);
		at = put64(at, zip64_end);
		at = put32(at, 1); /* disks */
	}
	at = put32(at, 0x06054b50);
	at = put16(put16(at, 0), 0);
	at = put16(at, zip->count >= MAX_16 ? MAX_16 : (uint16_t)zip->count);
	at = put16(at, zip->count >= MAX_16 ? MAX_16 : (uint16_t)zip->count);
	at = put32(put32(at, clamp32(size)), clamp32(start));
	at = put16(at, 0); /* comment */
	return write_bytes(zip, end, (size_t)(at - end));
}

int zip_writer_close(struct zip_writer *zip)
{
	int status = write_central_directory(zip), error = errno;

	if (close(zip->fd) < 0 && status == 0) {
		error = errno;
		status = -1;
	}
	for (size_t i = 0; i < zip->count; i++)
		free(zip->members[i].name);
	free(zip->members);
	free(zip);
	errno = error;
	return status;
}
