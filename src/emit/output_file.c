#include "output_file.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char *output_file_temporary_path(const char *path)
{
	return xasprintf("%s.partial", path);
}

int output_file_open(struct output_file *file, const char *path)
{
	file->path = xstrdup(path);
	file->temporary_path = output_file_temporary_path(path);
	file->stream = fopen(file->temporary_path, "we");
	if (file->stream)
		return 0;
	free(file->path);
	free(file->temporary_path);
	return -1;
}

int output_file_finish_path(const char *temporary_path, const char *path, int status)
{
	int error = errno;

	if (status == 0 && rename(temporary_path, path) == 0)
		return 0;
	if (status == 0)
		error = errno;
	unlink(temporary_path);
	errno = error;
	return -1;
}

int output_file_commit(struct output_file *file, bool failed)
{
	int error = failed ? (errno ? errno : EIO) : 0, status;

	if (fclose(file->stream) != 0 && !error)
		error = errno;
	errno = error;
	status = output_file_finish_path(file->temporary_path, file->path, error ? -1 : 0);
	error = errno;
	free(file->path);
	free(file->temporary_path);
	errno = error;
	return status;
}
