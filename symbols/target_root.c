#include "target_root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int target_root_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int target_root_openat(int root_fd, const char *path, int flags)
{
	struct open_how how = {
	    .flags = (unsigned)(flags | O_CLOEXEC),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	if (root_fd < 0)
		return open(path, flags | O_CLOEXEC);
	return (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
}
