#include "target_file.h"
#include "target_root.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { CHUNK_SIZE = 65536 };

/* Closes `fd` and returns -1, keeping errno (or setting `error` if not 0). */
static int fail_closing(int fd, int error)
{
	int saved_errno = error ? error : errno;

	close(fd);
	errno = saved_errno;
	return -1;
}

int target_file_open(int root_fd, const char *path, int flags)
{
	char reopen_path[32];
	struct stat status;
	int handle = target_root_openat(root_fd, path, O_PATH | flags), fd;

	if (handle < 0)
		return -1;
	if (fstat(handle, &status) != 0)
		return fail_closing(handle, 0);
	if (!S_ISREG(status.st_mode))
		return fail_closing(handle, EINVAL);
	/* Reopening the handle's own /proc link opens exactly the inode just
	 * checked: a swap of the path in between changes nothing. */
	snprintf(reopen_path, sizeof(reopen_path), "/proc/self/fd/%d", handle);
	fd = open(reopen_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail_closing(handle, 0);
	close(handle);
	return fd;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

int target_file_read(int fd, struct target_file_budget *budget, target_file_sink sink,
		     void *context)
{
	char buffer[CHUNK_SIZE];
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!budget->stopped_by) {
		uint64_t left = budget->max_bytes - budget->bytes_read;
		size_t wanted = left < sizeof(buffer) ? (size_t)left : sizeof(buffer);
		ssize_t length;

		if (wanted == 0) {
			budget->stopped_by = "the size limit";
			break;
		}
		if (seconds_since(&start) > budget->max_seconds) {
			budget->stopped_by = "the time limit";
			break;
		}
		length = read(fd, buffer, wanted);
		if (length == 0 || (length < 0 && errno == EAGAIN))
			return 0;
		if (length < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		budget->bytes_read += (uint64_t)length;
		sink(buffer, (size_t)length, context);
	}
	return 0;
}

const char *target_file_describe_budget(const struct target_file_budget *budget, char *buffer,
					size_t size)
{
	snprintf(buffer, size, "stopped reading after %.1f MiB: %s",
		 (double)budget->bytes_read / (1 << 20),
		 budget->stopped_by ? budget->stopped_by : "no limit");
	return buffer;
}
