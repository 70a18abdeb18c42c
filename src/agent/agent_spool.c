#include "agent_spool.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_PREFIX "period-"

char *agent_spool_default_dir(void)
{
	const char *state = getenv("STATE_DIRECTORY");

	if (state && state[0] == '/')
		return xasprintf("%.*s/spool", (int)strcspn(state, ":"), state);
	if (geteuid() == 0) {
		mkdir("/var/lib/profcpu", 0700); /* checked with the spool below it */
		return xstrdup("/var/lib/profcpu/spool");
	}
	return xasprintf("/tmp/profcpu-agent-%u", (unsigned)geteuid());
}

/* Whether the open folder `fd` is one the agent may trust; else says why. */
static bool trusted_folder(const char *dir, int fd)
{
	struct stat status;

	if (fstat(fd, &status) < 0) {
		report_error("cannot read the spool folder %s: %s", dir, strerror(errno));
		return false;
	}
	if (status.st_uid != geteuid()) {
		report_error("the spool folder %s belongs to uid %u, not to the agent's (uid %u): "
			     "another user could plant files the agent reads; remove it or choose "
			     "another with --spool DIR",
			     dir, (unsigned)status.st_uid, (unsigned)geteuid());
		return false;
	}
	if (status.st_mode & (S_IWGRP | S_IWOTH)) {
		report_error("the spool folder %s is writable by other users (mode %04o): chmod "
			     "700 it or choose another with --spool DIR",
			     dir, (unsigned)(status.st_mode & 07777));
		return false;
	}
	return true;
}

int agent_spool_make(struct agent_spool *spool)
{
	struct stat status;

	spool->fd = -1;
	if (mkdir(spool->dir, 0700) < 0 && errno != EEXIST) {
		report_error("cannot make the spool folder %s: %s; choose another with --spool DIR",
			     spool->dir, strerror(errno));
		return -1;
	}
	spool->fd = open(spool->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (spool->fd < 0) {
		bool link = lstat(spool->dir, &status) == 0 && S_ISLNK(status.st_mode);

		report_error("the spool folder %s %s: remove it or choose another with --spool DIR",
			     spool->dir,
			     link ? "is a symbolic link, which the agent does not follow"
			     : errno == ENOTDIR ? "is not a folder"
						: strerror(errno));
		return -1;
	}
	if (!trusted_folder(spool->dir, spool->fd)) {
		close(spool->fd);
		spool->fd = -1;
		return -1;
	}
	return 0;
}

char *agent_spool_new_period(struct agent_spool *spool)
{
	struct timespec now;
	char *dir;

	clock_gettime(CLOCK_REALTIME, &now);
	/* Names sort in time order: a new run's after an old run's. */
	dir = xasprintf("%s/" PERIOD_PREFIX "%013lld-%06u", spool->dir,
			(long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, spool->sequence++);
	if (mkdirat(spool->fd, strrchr(dir, '/') + 1, 0700) < 0) {
		report_error("cannot make %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

static int is_period(const struct dirent *entry)
{
	return !strncmp(entry->d_name, PERIOD_PREFIX, strlen(PERIOD_PREFIX));
}

void agent_spool_take_left(struct agent_spool *spool, const char *skip, bool say)
{
	struct dirent **entries;
	int count = scandirat(spool->fd, ".", &entries, is_period, alphasort), taken = 0;

	for (int i = 0; i < count; i++) {
		char *dir = xasprintf("%s/%s", spool->dir, entries[i]->d_name);
		int fd = openat(spool->fd, entries[i]->d_name,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		/* A link or a file in a period's place is no period the agent made:
		 * left alone. */
		if (fd >= 0 && faccessat(fd, AGENT_SPOOL_READING, F_OK, 0) == 0) {
			report_error(
			    "a worker of the agent died reading %s: that period is dropped", dir);
			remove_flat_folder(dir);
		} else if (fd >= 0 && (!skip || strcmp(dir, skip))) {
			agent_spool_add(spool, dir);
			taken++;
		}
		if (fd >= 0)
			close(fd);
		free(dir);
		free(entries[i]);
	}
	if (say && taken)
		fprintf(stderr, "profcpu: %d periods an earlier run left in %s go first\n", taken,
			spool->dir);
	free(count >= 0 ? entries : NULL);
}

void agent_spool_add(struct agent_spool *spool, const char *dir)
{
	grow_array((void **)&spool->periods, &spool->capacity, spool->count + 1,
		   sizeof(*spool->periods));
	spool->periods[spool->count++] = (struct agent_period){xstrdup(dir), spool->next_number++};
}

void agent_spool_remove(struct agent_spool *spool, size_t index)
{
	remove_flat_folder(spool->periods[index].dir);
	free(spool->periods[index].dir);
	memmove(&spool->periods[index], &spool->periods[index + 1],
		(spool->count - index - 1) * sizeof(*spool->periods));
	spool->count--;
}

void agent_spool_drop_oldest(struct agent_spool *spool)
{
	size_t excess = spool->count > spool->max_periods ? spool->count - spool->max_periods : 0;

	if (excess && !spool->said_dropping) {
		fprintf(stderr,
			"profcpu: %zu periods wait for %s, the most kept (--buffer-periods): the "
			"oldest are dropped from now on (said once; counted at the end)\n",
			spool->count, spool->url);
		spool->said_dropping = true;
	}
	for (size_t i = 0; i < excess; i++)
		agent_spool_remove(spool, 0);
	spool->dropped += excess;
}

void agent_spool_close(struct agent_spool *spool)
{
	if (spool->dropped)
		fprintf(stderr, "profcpu: %llu periods were dropped while %s took none\n",
			spool->dropped, spool->url);
	if (spool->count)
		fprintf(stderr,
			"profcpu: %zu periods stay in %s: the next profcpu agent with --spool %s "
			"sends them\n",
			spool->count, spool->dir, spool->dir);
	for (size_t i = 0; i < spool->count; i++)
		free(spool->periods[i].dir);
	free(spool->periods);
	spool->periods = NULL;
	spool->count = spool->capacity = 0;
	if (spool->fd >= 0)
		close(spool->fd);
	spool->fd = -1;
}

FILE *agent_spool_open_file(const char *path, int flags, const char *mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *file = fd >= 0 ? fdopen(fd, mode) : NULL;

	if (fd >= 0 && !file)
		close(fd);
	return file;
}
