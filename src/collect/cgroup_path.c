#include "cgroup_path.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { ID_LENGTH = 64, UID_LENGTH = 36 };

/* One component of a cgroup path, without its systemd suffix. */
struct component {
	const char *start;
	size_t length;
};

static bool ends_with(struct component part, const char *suffix)
{
	size_t length = strlen(suffix);

	return part.length >= length && !memcmp(part.start + part.length - length, suffix, length);
}

static bool all_of(const char *text, size_t length, const char *allowed)
{
	for (size_t i = 0; i < length; i++)
		if (!text[i] || !strchr(allowed, text[i]))
			return false;
	return true;
}

/* The component without ".scope" or ".slice". */
static struct component without_unit_suffix(struct component part)
{
	if (ends_with(part, ".scope") || ends_with(part, ".slice"))
		part.length -= 6;
	return part;
}

static bool is_named(struct component part, const char *name)
{
	return part.length == strlen(name) && !memcmp(part.start, name, part.length);
}

/* A container's cgroup: its id alone (unless `bare_is_pod`: podman's pods
 * under libpod_parent), or after a runtime's prefix ending in '-' (docker-,
 * libpod-, cri-containerd-, crio-), but not its monitor's (libpod-conmon-,
 * crio-conmon-). */
static bool container_of(struct component part, bool bare_is_pod, char container[CGROUP_ID_SIZE])
{
	const char *id;
	size_t prefix;

	part = without_unit_suffix(part);
	if (part.length < ID_LENGTH)
		return false;
	id = part.start + part.length - ID_LENGTH;
	prefix = (size_t)(id - part.start);
	if (!all_of(id, ID_LENGTH, "0123456789abcdef") || (prefix == 0 && bare_is_pod) ||
	    (prefix > 0 && (id[-1] != '-' || memmem(part.start, prefix, "conmon", 6))))
		return false;
	memcpy(container, id, ID_LENGTH);
	container[ID_LENGTH] = '\0';
	return true;
}

/* A pod's cgroup: the kubelet's pod<uid> (cgroupfs) or
 * kubepods-<class>-pod<uid with '_'>.slice (systemd), podman's
 * machine-libpod_pod_<id>.slice (systemd) or bare <id> (cgroupfs). */
static bool pod_of(struct component part, char pod[CGROUP_ID_SIZE])
{
	const char *id;

	part = without_unit_suffix(part);
	if (part.length >= UID_LENGTH + 3) {
		id = part.start + part.length - UID_LENGTH;
		if (!memcmp(id - 3, "pod", 3) && all_of(id, UID_LENGTH, "0123456789abcdef-_")) {
			for (size_t i = 0; i < UID_LENGTH; i++)
				pod[i] = id[i] == '_' ? '-' : id[i];
			pod[UID_LENGTH] = '\0';
			return true;
		}
	}
	if (part.length < ID_LENGTH)
		return false;
	id = part.start + part.length - ID_LENGTH;
	if (!all_of(id, ID_LENGTH, "0123456789abcdef") ||
	    (id != part.start && (id - part.start < 11 || memcmp(id - 11, "libpod_pod_", 11))))
		return false;
	memcpy(pod, id, ID_LENGTH);
	pod[ID_LENGTH] = '\0';
	return true;
}

bool cgroup_path_container(const char *path, char container[CGROUP_ID_SIZE],
			   char pod[CGROUP_ID_SIZE])
{
	struct component parts[64];
	size_t count = 0;

	container[0] = pod[0] = '\0';
	for (const char *cursor = path; *cursor && count < sizeof(parts) / sizeof(*parts);) {
		size_t length = strcspn(cursor, "/\n");

		if (length)
			parts[count++] = (struct component){cursor, length};
		cursor += length;
		if (*cursor == '\n')
			break;
		if (*cursor)
			cursor++;
	}
	/* The innermost container cgroup (podman's may have a child), then
	 * the pod around it. */
	for (size_t i = count; i-- > 0;) {
		if (!container_of(parts[i], i > 0 && is_named(parts[i - 1], "libpod_parent"),
				  container))
			continue;
		while (i-- > 0)
			if (pod_of(parts[i], pod))
				break;
		return true;
	}
	return false;
}

bool cgroup_file_next_path(const char **text, size_t *length, char *path, size_t size)
{
	while (*length) {
		const char *newline = memchr(*text, '\n', *length);
		size_t line = newline ? (size_t)(newline - *text) : *length;
		/* The path follows the line's second ':'. */
		const char *first = memchr(*text, ':', line);
		const char *second =
		    first ? memchr(first + 1, ':', line - (size_t)(first + 1 - *text)) : NULL;
		size_t path_length = second ? line - (size_t)(second + 1 - *text) : 0;
		bool found = second && path_length < size;

		if (found) {
			memcpy(path, second + 1, path_length);
			path[path_length] = '\0';
		}
		*text += newline ? line + 1 : line;
		*length -= newline ? line + 1 : line;
		if (found)
			return true;
	}
	return false;
}

bool cgroup_file_container(const char *text, size_t length, char container[CGROUP_ID_SIZE],
			   char pod[CGROUP_ID_SIZE])
{
	char path[1024];

	container[0] = pod[0] = '\0';
	while (cgroup_file_next_path(&text, &length, path, sizeof(path)))
		if (cgroup_path_container(path, container, pod))
			return true;
	container[0] = pod[0] = '\0';
	return false;
}

size_t cgroup_file_read(pid_t pid, char *text, size_t size)
{
	char path[64];
	int fd;
	ssize_t length;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	length = fd >= 0 ? read(fd, text, size - 1) : -1;
	if (fd >= 0)
		close(fd);
	text[length > 0 ? length : 0] = '\0';
	return length > 0 ? (size_t)length : 0;
}
