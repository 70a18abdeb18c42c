/* A file's bytes in memory, read only where they are asked for: a buffer of
 * the file's size whose pages stay zero (and cost nothing) until loaded.
 * For large files of which a reader needs a few tables, as a .NET image's
 * metadata and ReadyToRun tables beside megabytes of code.
 *
 * The bytes are a private copy: the file changing or shrinking later cannot
 * hurt the reader (as it could with a mapping of the file, by SIGBUS). */
#ifndef PROFCPU_SPARSE_FILE_H
#define PROFCPU_SPARSE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPARSE_FILE_PAGE 4096

struct sparse_file {
	int fd;		/* -1 once reading is done */
	uint8_t *bytes; /* `size` bytes; NULL for an empty file */
	size_t size;
	uint64_t base;	 /* the file offset of bytes[0] */
	uint8_t *loaded; /* one bit per page */
};

/* Takes `fd` (closed by sparse_file_done or sparse_file_free), which must be
 * a regular file of at most `max_size` bytes. False, closing it, otherwise. */
bool sparse_file_open(struct sparse_file *file, int fd, uint64_t max_size);

/* The same for the `size` bytes at `offset` of the file `fd` (a file
 * inside another, as the assemblies of a .NET single-file app are): bytes[i]
 * is the file's byte at offset + i. False, closing `fd`, when that range
 * is not all in the file, is empty or longer than `max_size`. */
bool sparse_file_open_range(struct sparse_file *file, int fd, uint64_t offset, uint64_t size,
			    uint64_t max_size);

/* Makes the `length` bytes at `offset` hold the file's bytes, reading the
 * pages not yet read. False when they lie past the end or reading fails. */
bool sparse_file_load(struct sparse_file *file, uint64_t offset, uint64_t length);

/* Closes the file: pages not loaded stay zero. */
void sparse_file_done(struct sparse_file *file);

/* Closes the file and frees its bytes. */
void sparse_file_free(struct sparse_file *file);

#endif
