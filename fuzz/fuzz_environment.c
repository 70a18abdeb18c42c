/* A process's /proc/PID/environ: the process wrote it. */
#include "target_environment.h"

#include <limits.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"TMPDIR", "DOTNET_PerfMapJitDumpPath", "A"};
	char value[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		target_environment_find((const char *)data, size, names[i], value, sizeof(value));
	target_environment_find((const char *)data, size, "TMPDIR", value, 4); /* too small */
	return 0;
}
