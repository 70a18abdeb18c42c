/* A file of the output folder, written under a temporary name (NAME.partial)
 * and renamed to NAME only once it is complete: a reader never finds a
 * half-written output under its final name, and an output that could not be
 * written (a full disk, a signal's abort) leaves no file that looks whole. */
#ifndef PROFCPU_OUTPUT_FILE_H
#define PROFCPU_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

struct output_file {
	char *path;	      /* the final name */
	char *temporary_path; /* where it is written until then */
	FILE *stream;	      /* buffered, on temporary_path */
};

/* Creates `path`'s temporary file. Returns 0, or -1 with errno set. */
int output_file_open(struct output_file *file, const char *path);

/* Flushes and closes the stream and renames the file to its final name
 * (replacing an older one). On any failure the temporary file is removed
 * and -1 returned with errno set; `failed` (the writer saw an error, errno
 * says which) removes it as well. Frees what output_file_open made. */
int output_file_commit(struct output_file *file, bool failed);

/* The temporary name of `path`, for outputs written by a library that takes
 * a file name (libarchive): freed by the caller. */
char *output_file_temporary_path(const char *path);

/* Renames `temporary_path` to `path` when `status` is 0, else removes it.
 * Returns `status`, or -1 with errno set when the rename fails. */
int output_file_finish_path(const char *temporary_path, const char *path, int status);

#endif
