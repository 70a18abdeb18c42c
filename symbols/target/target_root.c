#include "target_root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { MAX_SYMLINKS = 40, MAX_DEPTH = 256, OPENAT2_RETRIES = 8 };

static bool openat2_missing;

int target_root_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

bool target_root_has_openat2(void)
{
	return !openat2_missing;
}

pid_t target_root_namespace_pid(pid_t pid)
{
	char path[64], line[256], *rest;
	pid_t namespace_pid = pid;
	FILE *status;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status = fopen(path, "re");
	while (status && fgets(line, sizeof(line), status)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		/* strtok_r: the agent's runtime sessions open targets from
		 * several threads at once. */
		for (char *field = strtok_r(line + 6, " \t\n", &rest); field;
		     field = strtok_r(NULL, " \t\n", &rest))
			namespace_pid = (pid_t)atoi(field);
		break;
	}
	if (status)
		fclose(status);
	return namespace_pid;
}

int target_root_openat(int root_fd, const char *path, int flags)
{
	struct open_how how = {
	    .flags = (unsigned)(flags | O_CLOEXEC),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = -1;

	if (root_fd < 0)
		return open(path, flags | O_CLOEXEC);
	if (openat2_missing)
		return target_root_openat_by_walk(root_fd, path, flags);
	/* EAGAIN: a rename or mount raced with the lookup; the kernel asks to
	 * try again. */
	for (int attempt = 0; attempt < OPENAT2_RETRIES; attempt++) {
		fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	if (fd < 0 && errno == ENOSYS) {
		openat2_missing = true;
		return target_root_openat_by_walk(root_fd, path, flags);
	}
	return fd;
}

/* The directories walked so far: fds[0] is the root, fds[depth - 1] the
 * current directory. ".." pops, so it can never climb above the root. */
struct walk {
	int fds[MAX_DEPTH];
	int depth;
};

static void walk_pop_to(struct walk *walk, int depth)
{
	while (walk->depth > depth)
		close(walk->fds[--walk->depth]);
}

/* Replaces `*remaining` with `target` followed by the rest of the path. */
static int splice_symlink(char **remaining, const char *target, const char *rest)
{
	size_t target_length = strlen(target), rest_length = strlen(rest);
	char *joined = malloc(target_length + rest_length + 2);

	if (!joined)
		return -1;
	/* No '/' before an empty rest: "target/" would demand a directory. */
	memcpy(joined, target, target_length);
	joined[target_length] = rest_length ? '/' : '\0';
	memcpy(joined + target_length + 1, rest, rest_length + 1);
	free(*remaining);
	*remaining = joined;
	return 0;
}

/* Opens the final component for real and checks it is the file the O_PATH
 * walk saw, so a swap between the two opens fails instead of escaping. */
static int open_final(int directory_fd, const char *name, int flags, const struct stat *seen)
{
	struct stat opened;
	int fd = openat(directory_fd, name, flags | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &opened) != 0 || opened.st_dev != seen->st_dev ||
	    opened.st_ino != seen->st_ino) {
		close(fd);
		errno = EAGAIN;
		return -1;
	}
	return fd;
}

int target_root_openat_by_walk(int root_fd, const char *path, int flags)
{
	struct walk walk = {.depth = 0};
	char *remaining = strdup(path), link_target[PATH_MAX];
	char *cursor;
	int links = 0, result = -1, saved_errno = 0;

	if (!remaining)
		return -1;
	walk.fds[walk.depth] = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (walk.fds[walk.depth] < 0)
		goto out;
	walk.depth = 1;
	cursor = remaining;
	for (;;) {
		char *name, *slash;
		struct stat status;
		ssize_t length;
		int fd;

		while (*cursor == '/')
			cursor++;
		if (*cursor == '\0') { /* the path names a directory */
			result = openat(walk.fds[walk.depth - 1], ".", flags | O_CLOEXEC);
			break;
		}
		name = cursor;
		slash = strchr(cursor, '/');
		cursor = slash ? slash + 1 : cursor + strlen(cursor);
		if (slash)
			*slash = '\0';
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			walk_pop_to(&walk, walk.depth > 1 ? walk.depth - 1 : 1);
			continue;
		}
		fd = openat(walk.fds[walk.depth - 1], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &status) != 0) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (S_ISLNK(status.st_mode)) {
			length = readlinkat(fd, "", link_target, sizeof(link_target) - 1);
			close(fd);
			if (length < 0)
				break;
			if (++links > MAX_SYMLINKS) {
				errno = ELOOP;
				break;
			}
			link_target[length] = '\0';
			if (link_target[0] == '/')
				walk_pop_to(&walk, 1);
			if (splice_symlink(&remaining, link_target, cursor) != 0)
				break;
			cursor = remaining;
			continue;
		}
		if (*cursor == '\0' && !slash) { /* last component */
			result = open_final(walk.fds[walk.depth - 1], name, flags, &status);
			close(fd);
			break;
		}
		if (!S_ISDIR(status.st_mode) || walk.depth == MAX_DEPTH) {
			close(fd);
			errno = S_ISDIR(status.st_mode) ? ENAMETOOLONG : ENOTDIR;
			break;
		}
		walk.fds[walk.depth++] = fd;
	}
out:
	saved_errno = errno;
	walk_pop_to(&walk, 0);
	free(remaining);
	errno = saved_errno;
	return result;
}
