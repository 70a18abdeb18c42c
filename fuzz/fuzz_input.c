#include "fuzz_input.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int fuzz_input_file(const uint8_t *data, size_t size, char path[32])
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		abort();
	while (done < size) {
		ssize_t written = write(fd, data + done, size - done);

		if (written <= 0)
			abort();
		done += (size_t)written;
	}
	snprintf(path, 32, "/proc/self/fd/%d", fd);
	return fd;
}

FILE *fuzz_null_output(void)
{
	static FILE *null_output;

	if (!null_output && !(null_output = fopen("/dev/null", "we")))
		abort();
	return null_output;
}
