/* A line of /proc/PID/cgroup: the cgroup names are the runtimes', and a
 * container with a delegated cgroup names its own. */
#include "cgroup_path.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = malloc(size + 1), container[CGROUP_ID_SIZE], pod[CGROUP_ID_SIZE];

	if (!path)
		return 0;
	memcpy(path, data, size);
	path[size] = '\0';
	cgroup_path_container(path, container, pod);
	free(path);
	return 0;
}
