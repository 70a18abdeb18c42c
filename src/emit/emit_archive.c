#include "emit.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* A zip deflates each member but those compressed already; a tar.gz's
 * gzip takes the whole stream. */
static int set_member_compression(struct archive *archive, enum archive_format format,
				  const struct archive_member *member)
{
	if (format != ARCHIVE_ZIP)
		return ARCHIVE_OK;
	return member->compressed ? archive_write_zip_set_compression_store(archive)
				  : archive_write_zip_set_compression_deflate(archive);
}

static int add_member(struct archive *archive, enum archive_format format, int dir_fd,
		      const struct archive_member *member, const char *top)
{
	char path_in_archive[4096], buffer[65536];
	struct archive_entry *entry;
	struct stat status;
	ssize_t length;
	int fd = openat(dir_fd, member->file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &status) < 0) {
		close(fd);
		return -1;
	}
	snprintf(path_in_archive, sizeof(path_in_archive), "%s/%s", top,
		 member->name ? member->name : member->file);
	entry = archive_entry_new();
	archive_entry_copy_stat(entry, &status);
	archive_entry_set_pathname(entry, path_in_archive);
	archive_entry_set_uid(entry, 0);
	archive_entry_set_gid(entry, 0);
	if (set_member_compression(archive, format, member) != ARCHIVE_OK ||
	    archive_write_header(archive, entry) != ARCHIVE_OK) {
		archive_entry_free(entry);
		close(fd);
		return -1;
	}
	archive_entry_free(entry);
	while ((length = read(fd, buffer, sizeof(buffer))) > 0)
		if (archive_write_data(archive, buffer, (size_t)length) != length)
			break;
	close(fd);
	return length == 0 ? 0 : -1;
}

/* Compression level 1 for both: several times faster than the default, and
 * an archive for moving a capture can spare a few more bytes. */
static int set_format(struct archive *archive, enum archive_format format)
{
	switch (format) {
	case ARCHIVE_TAR_GZ:
		if (archive_write_set_format_pax_restricted(archive) != ARCHIVE_OK ||
		    archive_write_add_filter_gzip(archive) != ARCHIVE_OK)
			return -1;
		return archive_write_set_filter_option(archive, "gzip", "compression-level", "1") ==
			       ARCHIVE_OK
			   ? 0
			   : -1;
	case ARCHIVE_ZIP:
		if (archive_write_set_format_zip(archive) != ARCHIVE_OK)
			return -1;
		return archive_write_set_format_option(archive, "zip", "compression-level", "1") ==
			       ARCHIVE_OK
			   ? 0
			   : -1;
	}
	return -1;
}

int emit_archive(const char *dir, const struct archive_member *members, size_t member_count,
		 const char *top, enum archive_format format, const char *archive_path)
{
	struct archive *archive = archive_write_new();
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), status = 0;

	if (dir_fd < 0 || set_format(archive, format) < 0 ||
	    archive_write_open_filename(archive, archive_path) != ARCHIVE_OK) {
		if (!errno)
			errno = archive_errno(archive) ? archive_errno(archive) : EIO;
		status = -1;
	}
	for (size_t i = 0; status == 0 && i < member_count; i++)
		status = add_member(archive, format, dir_fd, &members[i], top);
	if (archive_write_close(archive) != ARCHIVE_OK && status == 0) {
		errno = archive_errno(archive) ? archive_errno(archive) : EIO;
		status = -1;
	}
	archive_write_free(archive);
	if (dir_fd >= 0)
		close(dir_fd);
	return status;
}
