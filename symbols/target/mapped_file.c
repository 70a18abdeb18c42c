#include "mapped_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static bool stat_matches(const struct stat *status, const struct file_identity *identity)
{
	return status->st_ino == identity->inode && major(status->st_dev) == identity->major &&
	       minor(status->st_dev) == identity->minor;
}

/* By path the device may differ for the very file: a mapping on overlayfs
 * (container images) names the layer's device, a stat through the overlay
 * the overlay's; the inode is the layer's in both. */
bool file_identity_matches(int fd, const struct file_identity *identity)
{
	struct stat status;

	return identity->inode == 0 || (fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
					status.st_ino == identity->inode);
}

int map_files_open(pid_t pid, const struct file_identity *identity)
{
	char path[64];
	DIR *directory;
	struct dirent *entry;
	int fd = -1;

	if (identity->inode == 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/map_files", (int)pid);
	directory = opendir(path);
	if (!directory)
		return -1;
	/* Entries are "start-end" links to the mapped files themselves: the
	 * kernel's own file objects, not paths, so nothing of the target's
	 * file system is resolved on the way. */
	while (fd < 0 && (entry = readdir(directory))) {
		struct stat status;

		if (entry->d_name[0] == '.' ||
		    fstatat(dirfd(directory), entry->d_name, &status, 0) != 0 ||
		    !S_ISREG(status.st_mode) || !stat_matches(&status, identity))
			continue;
		fd = openat(dirfd(directory), entry->d_name,
			    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	closedir(directory);
	return fd;
}
