/* profcpu view on any file: the zip reader, then the perf-script text of
 * the first *.data.txt inside, then the summary (written to /dev/null). */
#include "commands.h"
#include "fuzz_input.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet_stdout = -1;
	char path[32], *argv[] = {"view", path, NULL};
	int fd = fuzz_input_file(data, size, path);

	if (quiet_stdout < 0) { /* the summary goes to stdout: keep the log readable */
		quiet_stdout = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (quiet_stdout < 0 || dup2(quiet_stdout, STDOUT_FILENO) < 0)
			abort();
	}
	cmd_view(2, argv);
	fflush(stdout);
	close(fd);
	return 0;
}
