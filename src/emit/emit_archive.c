/* prof.tar.gz and NAME.trace.zip. Both deflate with ISA-L
 * (deflate_stream.h): libarchive writes the tar stream, which is gzipped
 * here, and zip_writer.h the zip; minizip reads it back for the tar.gz.
 * The two hold the same large files (the runtime's jitdump, perf map and
 * events): written after the zip, the tar.gz takes their deflated bytes
 * from it instead of deflating them again. */
#include "deflate_stream.h"
#include "emit.h"
#include "util.h"
#include "zip_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <minizip/unzip.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_SIZE 65536

/* Opens a member inside `dir_fd`, with its status. Returns the descriptor,
 * or -1 with errno set (ENOENT: the member is left out). */
static int open_member(int dir_fd, const struct archive_member *member, struct stat *status)
{
	int fd = openat(dir_fd, member->file, O_RDONLY | O_CLOEXEC), error;

	if (fd < 0 || fstat(fd, status) == 0)
		return fd;
	error = errno;
	close(fd);
	errno = error;
	return -1;
}

static void format_path(char *path, size_t size, const char *top,
			const struct archive_member *member)
{
	snprintf(path, size, "%s/%s", top, member->name ? member->name : member->file);
}

/* One member of a zip: deflated at level 1 (several times faster than
 * zlib's default, and an archive for moving a capture can spare a few more
 * bytes), or stored as the member asks; with the file's time and Unix
 * permissions. */
static int add_zip_member(struct zip_writer *zip, int dir_fd, const struct archive_member *member,
			  const char *top)
{
	char path_in_archive[4096];
	struct stat status;
	int fd = open_member(dir_fd, member, &status), result, error;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	format_path(path_in_archive, sizeof(path_in_archive), top, member);
	result = zip_writer_add(zip, path_in_archive, fd, &status, member->stored);
	error = errno;
	close(fd);
	errno = error;
	return result;
}

static int write_zip(int dir_fd, const struct archive_member *members, size_t member_count,
		     const char *top, const char *archive_path)
{
	struct zip_writer *zip = zip_writer_open(archive_path);
	int status = 0, error;

	if (!zip)
		return -1;
	for (size_t i = 0; status == 0 && i < member_count; i++)
		status = add_zip_member(zip, dir_fd, &members[i], top);
	error = errno;
	if (zip_writer_close(zip) < 0 && status == 0)
		return -1;
	errno = error;
	return status;
}

/* The tar stream from libarchive, gzipped into the archive file. */
struct gzip_output {
	int fd;
	struct deflate_stream deflater;
	int error; /* errno of the first failure */
	/* Bytes of the member being written that are not deflated here:
	 * counted, and either stored as they are (`storing`: a stored
	 * member) or passed over (their deflated bytes were taken
	 * from the zip); and their CRC-32. */
	uint64_t passing;
	bool storing;
	uint32_t passed_crc;
};

static int write_all(void *context, const void *bytes, size_t size)
{
	struct gzip_output *output = context;

	return write_whole(output->fd, bytes, size);
}

/* `size` bytes as stored deflate blocks, after a full flush. */
static int write_stored(struct gzip_output *output, const uint8_t *bytes, size_t size)
{
	while (size) {
		uint16_t length = size < UINT16_MAX ? (uint16_t)size : UINT16_MAX;
		/* Not the last block, stored; its length and that inverted. */
		uint8_t header[5] = {0, length & 0xff, length >> 8, ~length & 0xff,
				     (uint8_t)(~length >> 8)};

		if (write_all(output, header, sizeof(header)) < 0 ||
		    write_all(output, bytes, length) < 0)
			return -1;
		bytes += length;
		size -= length;
	}
	return 0;
}

static la_ssize_t gzip_tar_bytes(struct archive *archive, void *context, const void *bytes,
				 size_t size)
{
	struct gzip_output *output = context;
	size_t passed = output->passing < size ? (size_t)output->passing : size;

	(void)archive;
	if (passed) {
		deflate_stream_count(&output->deflater, bytes, passed);
		output->passed_crc = crc32_gzip_refl(output->passed_crc, bytes, passed);
		output->passing -= passed;
		if (output->storing && write_stored(output, bytes, passed) < 0) {
			output->error = errno;
			return -1;
		}
	}
	if (deflate_stream_write(&output->deflater, (const char *)bytes + passed, size - passed) ==
	    0)
		return (la_ssize_t)size;
	output->error = errno;
	return -1;
}

/* The zip written before the tar.gz, whose members' deflated bytes it
 * takes. */
struct deflated_zip {
	unzFile zip;
	int fd;
	const char *top;
};

/* Where `member`'s deflated bytes lie in the zip, up to the full flush
 * before their last block (deflate_stream.h), and their CRC-32: false when
 * the zip does not hold it deflated, as `status` says it is now. */
static bool find_deflated(const struct deflated_zip *deflated, const struct archive_member *member,
			  const struct stat *status, uint64_t *offset, uint64_t *length,
			  uint32_t *crc)
{
	char name[4096];
	uint8_t tail[DEFLATE_STREAM_FLUSH_SIZE + DEFLATE_STREAM_END_SIZE];
	unz_file_info64 info;

	if (!deflated || member->name)
		return false;
	format_path(name, sizeof(name), deflated->top, member);
	if (unzLocateFile(deflated->zip, name, 1) != UNZ_OK ||
	    unzGetCurrentFileInfo64(deflated->zip, &info, NULL, 0, NULL, 0, NULL, 0) != UNZ_OK ||
	    info.compression_method != Z_DEFLATED ||
	    info.uncompressed_size != (uint64_t)status->st_size ||
	    info.compressed_size < sizeof(tail) ||
	    unzOpenCurrentFile2(deflated->zip, NULL, NULL, 1) != UNZ_OK)
		return false;
	*offset = unzGetCurrentFileZStreamPos64(deflated->zip);
	unzCloseCurrentFile(deflated->zip);
	*length = info.compressed_size - DEFLATE_STREAM_END_SIZE;
	*crc = (uint32_t)info.crc;
	return pread(deflated->fd, tail, sizeof(tail),
		     (off_t)(*offset + info.compressed_size - sizeof(tail))) == sizeof(tail) &&
	       !memcmp(tail, DEFLATE_STREAM_FLUSH, DEFLATE_STREAM_FLUSH_SIZE) &&
	       !memcmp(tail + DEFLATE_STREAM_FLUSH_SIZE, DEFLATE_STREAM_END,
		       DEFLATE_STREAM_END_SIZE);
}

/* Puts `length` deflated bytes from the zip at `offset` into the tar.gz. */
static int copy_deflated(struct gzip_output *output, const struct deflated_zip *deflated,
			 uint64_t offset, uint64_t length)
{
	static uint8_t buffer[READ_SIZE];

	while (length) {
		ssize_t got =
		    pread(deflated->fd, buffer, length < sizeof(buffer) ? length : sizeof(buffer),
			  (off_t)offset);

		if (got <= 0) {
			if (got == 0)
				errno = EIO;
			return -1;
		}
		if (write_all(output, buffer, (size_t)got) < 0)
			return -1;
		offset += (uint64_t)got;
		length -= (uint64_t)got;
	}
	return 0;
}

static int add_tar_member(struct archive *archive, struct gzip_output *output, int dir_fd,
			  const struct archive_member *member, const char *top,
			  const struct deflated_zip *deflated)
{
	static char buffer[READ_SIZE];
	char path_in_archive[4096];
	struct archive_entry *entry;
	struct stat status;
	ssize_t length;
	uint64_t offset, deflated_length;
	uint32_t crc = 0;
	bool spliced;
	int fd = open_member(dir_fd, member, &status);

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	format_path(path_in_archive, sizeof(path_in_archive), top, member);
	entry = archive_entry_new();
	archive_entry_copy_stat(entry, &status);
	archive_entry_set_pathname(entry, path_in_archive);
	archive_entry_set_uid(entry, 0);
	archive_entry_set_gid(entry, 0);
	if (archive_write_header(archive, entry) != ARCHIVE_OK) {
		archive_entry_free(entry);
		close(fd);
		return -1;
	}
	archive_entry_free(entry);
	/* Deflated once for the zip, or a stored member: at a full flush, the
	 * zip's deflated bytes, or the file's own in stored blocks. */
	spliced = find_deflated(deflated, member, &status, &offset, &deflated_length, &crc);
	if (spliced || member->stored) {
		if (deflate_stream_flush(&output->deflater) < 0 ||
		    (spliced && copy_deflated(output, deflated, offset, deflated_length) < 0)) {
			close(fd);
			return -1;
		}
		output->passing = (uint64_t)status.st_size;
		output->storing = !spliced;
		output->passed_crc = 0;
	}
	while ((length = read(fd, buffer, sizeof(buffer))) > 0)
		if (archive_write_data(archive, buffer, (size_t)length) != length)
			break;
	close(fd);
	/* The file must be what the zip deflated: same size, same CRC-32. */
	if (length == 0 && (output->passing || (spliced && output->passed_crc != crc))) {
		output->passing = 0;
		errno = EIO;
		return -1;
	}
	return length == 0 ? 0 : -1;
}

static int write_tar_gz(int dir_fd, const struct archive_member *members, size_t member_count,
			const char *top, const char *archive_path,
			const struct deflated_zip *deflated)
{
	struct gzip_output *output = malloc(sizeof(*output));
	struct archive *archive;
	int status = 0;

	if (!output)
		return -1;
	output->error = 0;
	output->passing = 0;
	output->storing = false;
	output->fd = open(archive_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (output->fd < 0) {
		free(output);
		return -1;
	}
	deflate_stream_start(&output->deflater, true, write_all, output);
	archive = archive_write_new();
	/* Unblocked: each member's data reaches gzip_tar_bytes on its own. */
	if (archive_write_set_format_pax_restricted(archive) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(archive, 0) != ARCHIVE_OK ||
	    archive_write_open2(archive, output, NULL, gzip_tar_bytes, NULL, NULL) != ARCHIVE_OK)
		status = -1;
	for (size_t i = 0; status == 0 && i < member_count; i++)
		status = add_tar_member(archive, output, dir_fd, &members[i], top, deflated);
	if (archive_write_close(archive) != ARCHIVE_OK && status == 0)
		status = -1;
	if (status < 0 && !output->error)
		output->error = errno			 ? errno
				: archive_errno(archive) ? archive_errno(archive)
							 : EIO;
	archive_write_free(archive);
	if (deflate_stream_finish(&output->deflater) < 0 && status == 0) {
		output->error = errno;
		status = -1;
	}
	if (close(output->fd) < 0 && status == 0) {
		output->error = errno;
		status = -1;
	}
	errno = output->error;
	free(output);
	return status;
}

/* The zip to take deflated members from; false when it cannot be read. */
static bool open_deflated_zip(const struct deflated_members *from, struct deflated_zip *deflated)
{
	deflated->top = from->top;
	deflated->zip = unzOpen64(from->zip_path);
	deflated->fd = open(from->zip_path, O_RDONLY | O_CLOEXEC);
	if (deflated->zip && deflated->fd >= 0)
		return true;
	if (deflated->zip)
		unzClose(deflated->zip);
	if (deflated->fd >= 0)
		close(deflated->fd);
	return false;
}

int emit_archive(const char *dir, const struct archive_member *members, size_t member_count,
		 const char *top, enum archive_format format, const char *archive_path,
		 const struct deflated_members *deflated_in)
{
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), status, error;
	struct deflated_zip deflated;
	bool have_deflated;

	if (dir_fd < 0)
		return -1;
	have_deflated =
	    format == ARCHIVE_TAR_GZ && deflated_in && open_deflated_zip(deflated_in, &deflated);
	errno = 0;
	status = format == ARCHIVE_ZIP
		     ? write_zip(dir_fd, members, member_count, top, archive_path)
		     : write_tar_gz(dir_fd, members, member_count, top, archive_path,
				    have_deflated ? &deflated : NULL);
	error = errno;
	if (have_deflated) {
		unzClose(deflated.zip);
		close(deflated.fd);
	}
	close(dir_fd);
	errno = status < 0 && !error ? EIO : error;
	return status;
}
