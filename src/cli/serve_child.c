#include "serve_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

int serve_child_spawn(const char *const *arguments, bool quiet, pid_t *child, int *messages_fd)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attributes;
	sigset_t no_signals;
	int pipe_ends[2], spawned;

	if (pipe2(pipe_ends, O_CLOEXEC) < 0)
		return errno;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (quiet)
		posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDERR_FILENO);
	posix_spawnattr_init(&attributes);
	sigemptyset(&no_signals);
	posix_spawnattr_setsigmask(&attributes, &no_signals);
	posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
	spawned = posix_spawn(child, "/proc/self/exe", &actions, &attributes,
			      (char *const *)arguments, environ);
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attributes);
	close(pipe_ends[1]);
	if (spawned != 0) {
		close(pipe_ends[0]);
		return spawned;
	}
	*messages_fd = pipe_ends[0];
	return 0;
}
