#include "target_environment.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool target_environment_find(const char *environment, size_t length, const char *name, char *value,
			     size_t size)
{
	size_t name_length = strlen(name);
	const char *cursor = environment, *end = environment + length;

	while (cursor < end) {
		const char *terminator = memchr(cursor, '\0', (size_t)(end - cursor));
		size_t entry_length;

		if (!terminator) /* cut where the reading stopped: not trusted whole */
			return false;
		entry_length = (size_t)(terminator - cursor);
		if (entry_length > name_length && cursor[name_length] == '=' &&
		    !memcmp(cursor, name, name_length)) {
			size_t value_length = entry_length - name_length - 1;

			if (value_length >= size)
				return false;
			memcpy(value, cursor + name_length + 1, value_length);
			value[value_length] = '\0';
			return true;
		}
		cursor = terminator + 1;
	}
	return false;
}

bool target_environment_value(pid_t pid, const char *name, char *value, size_t size)
{
	char path[64], *environment;
	size_t length = 0, capacity = 65536;
	ssize_t got;
	bool found;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	environment = malloc(capacity);
	while (environment && (got = read(fd, environment + length, capacity - length)) > 0) {
		length += (size_t)got;
		if (length == capacity && capacity < TARGET_ENVIRONMENT_LIMIT) {
			char *larger = realloc(environment, capacity * 2);

			if (!larger)
				break;
			environment = larger;
			capacity *= 2;
		} else if (length == capacity) {
			break;
		}
	}
	close(fd);
	found = environment && target_environment_find(environment, length, name, value, size);
	free(environment);
	return found;
}
