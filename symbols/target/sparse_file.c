#include "sparse_file.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

bool sparse_file_open(struct sparse_file *file, int fd, uint64_t max_size)
{
	struct stat status;

	if (fd >= 0 && fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0)
		return sparse_file_open_range(file, fd, 0, (uint64_t)status.st_size, max_size);
	if (fd >= 0)
		close(fd);
	*file = (struct sparse_file){.fd = -1};
	return false;
}

bool sparse_file_open_range(struct sparse_file *file, int fd, uint64_t offset, uint64_t size,
			    uint64_t max_size)
{
	struct stat status;
	size_t pages;

	*file = (struct sparse_file){.fd = fd, .base = offset};
	/* A FIFO or device in the target's root must not be read (or block). */
	if (fd < 0 || fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || size == 0 ||
	    size > max_size || offset > (uint64_t)status.st_size ||
	    size > (uint64_t)status.st_size - offset)
		goto fail;
	file->size = (size_t)size;
	pages = (file->size + SPARSE_FILE_PAGE - 1) / SPARSE_FILE_PAGE;
	/* A mapping of its own, not the heap (main() keeps freed memory
	 * there, and calloc would zero every page): untouched pages cost no
	 * memory and no time. */
	file->bytes =
	    mmap(NULL, file->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (file->bytes == MAP_FAILED)
		file->bytes = NULL;
	file->loaded = calloc(1, (pages + 7) / 8);
	if (file->bytes && file->loaded)
		return true;
fail:
	if (file->bytes)
		munmap(file->bytes, file->size);
	free(file->loaded);
	if (fd >= 0)
		close(fd);
	*file = (struct sparse_file){.fd = -1};
	return false;
}

static bool page_loaded(const struct sparse_file *file, size_t page)
{
	return file->loaded[page / 8] & (1u << (page % 8));
}

bool sparse_file_load(struct sparse_file *file, uint64_t offset, uint64_t length)
{
	size_t page, last_page;

	if (offset > file->size || length > file->size - offset)
		return false;
	if (length == 0)
		return true;
	page = offset / SPARSE_FILE_PAGE;
	last_page = (offset + length - 1) / SPARSE_FILE_PAGE;
	while (page <= last_page) {
		size_t run_end = page, start, bytes;
		ssize_t got;

		if (page_loaded(file, page)) {
			page++;
			continue;
		}
		if (file->fd < 0)
			return false;
		while (run_end + 1 <= last_page && !page_loaded(file, run_end + 1))
			run_end++;
		start = page * SPARSE_FILE_PAGE;
		bytes = (run_end + 1) * SPARSE_FILE_PAGE - start;
		if (bytes > file->size - start)
			bytes = file->size - start;
		/* The file may have shrunk since: what is missing stays zero. */
		got = pread(file->fd, file->bytes + start, bytes, (off_t)(file->base + start));
		if (got < 0)
			return false;
		for (; page <= run_end; page++)
			file->loaded[page / 8] |= (uint8_t)(1u << (page % 8));
	}
	return true;
}

void sparse_file_done(struct sparse_file *file)
{
	if (file->fd >= 0)
		close(file->fd);
	file->fd = -1;
}

void sparse_file_free(struct sparse_file *file)
{
	sparse_file_done(file);
	if (file->bytes)
		munmap(file->bytes, file->size);
	free(file->loaded);
	*file = (struct sparse_file){.fd = -1};
}
