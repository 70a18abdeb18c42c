#include "runtime_directories.h"
#include "target_environment.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* `directory` from the first of `variables` that `pid` has set to an
 * absolute path, else /tmp; trailing slashes dropped. */
static void directory_from(pid_t pid, const char *const *variables, size_t count, char *directory,
			   size_t size)
{
	char value[PATH_MAX];

	for (size_t i = 0; i < count; i++) {
		if (!target_environment_value(pid, variables[i], value, sizeof(value)))
			continue;
		if (value[0] != '/' || strlen(value) >= size)
			break; /* the runtime would not use it as given: its /tmp is the guess */
		while (value[0] && value[strlen(value) - 1] == '/')
			value[strlen(value) - 1] = '\0';
		snprintf(directory, size, "%s", value);
		return;
	}
	snprintf(directory, size, "/tmp");
}

void runtime_perfmap_directory(pid_t pid, char *directory, size_t size)
{
	/* The runtime's configuration reads the DOTNET_ name first. */
	static const char *const variables[] = {"DOTNET_PerfMapJitDumpPath",
						"COMPlus_PerfMapJitDumpPath"};

	directory_from(pid, variables, 2, directory, size);
}

void runtime_socket_directory(pid_t pid, char *directory, size_t size)
{
	static const char *const variables[] = {"TMPDIR"};

	directory_from(pid, variables, 1, directory, size);
}
