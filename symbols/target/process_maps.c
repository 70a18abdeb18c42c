#include "process_maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int target_process_for_each_mapping(
    pid_t pid, int (*visit)(const struct process_mapping *mapping, void *context), void *context)
{
	char path[64], *line = NULL;
	size_t capacity = 0;
	ssize_t length;
	FILE *maps;
	int status = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(maps = fopen(path, "re")))
		return 0;
	while (status == 0 && (length = getline(&line, &capacity, maps)) > 0) {
		struct process_mapping mapping;
		int path_start = 0;

		if (line[length - 1] == '\n')
			line[length - 1] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &mapping.start, &mapping.end, mapping.permissions, &mapping.offset,
			   &mapping.major, &mapping.minor, &mapping.inode, &path_start) < 7)
			continue;
		mapping.path = line + path_start;
		status = visit(&mapping, context);
	}
	free(line);
	fclose(maps);
	return status;
}
