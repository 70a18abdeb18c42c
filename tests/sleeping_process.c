#include "sleeping_process.h"

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* posix_spawn may return before the child has run `sleep` (under
 * qemu-user, whose vfork does not wait for the exec), and once it has, before
 * the kernel shows its new environment: wait for both. */
static void wait_for_environment(pid_t pid)
{
	char path[64], target[PATH_MAX], byte;
	ssize_t length;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (;;) {
		length = readlink(path, target, sizeof(target) - 1);
		assert_true(length >= 0);
		target[length] = '\0';
		if (strstr(target, "/sleep"))
			break;
		usleep(1000);
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	for (;;) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		if (read(fd, &byte, 1) == 1)
			break;
		close(fd);
		usleep(1000);
	}
	close(fd);
}

pid_t sleeping_process_start(char *const *environment)
{
	char *arguments[] = {"sleep", "30", NULL};
	pid_t pid;

	assert_int_equal(posix_spawn(&pid, "/bin/sleep", NULL, NULL, arguments, environment), 0);
	wait_for_environment(pid);
	return pid;
}

void sleeping_process_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
