#include "runtime_files.h"
#include "jitdump.h"
#include "target_root.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_INTERVAL_NS 50000000ull

enum followed_file { PERF_MAP, JITDUMP, PERFINFO_MAP, FOLLOWED_FILES };

static const char *const name_patterns[FOLLOWED_FILES] = {"perf-%d.map", "jit-%d.dump",
							  "perfinfo-%d.map"};

struct followed {
	char source[64]; /* in the target's /tmp */
	char *copy;	 /* in the capture folder */
	int copy_fd;	 /* -1 until the source is first seen */
	dev_t device;	 /* of the source copied, to notice a new file */
	ino_t inode;
	uint64_t copied;
	bool restarted; /* by the last poll: a new file, or one cut shorter */
	bool limit_reported;
};

struct runtime_files {
	int root_fd;
	pid_t pid;
	struct followed files[FOLLOWED_FILES];
	int times_fd; /* perf-<pid>.map.times, -1 until the map is seen */
	char *times_path;
	uint64_t last_poll;
};

static uint64_t monotonic_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Starts the copy (again) from the source's beginning. */
static int restart_copy(struct followed *file, const struct stat *source)
{
	if (file->copy_fd < 0)
		file->copy_fd = open(file->copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	else if (ftruncate(file->copy_fd, 0) < 0)
		return -1;
	file->device = source->st_dev;
	file->inode = source->st_ino;
	file->copied = 0;
	return file->copy_fd < 0 ? -1 : 0;
}

/* Copies what `fd` holds past what was copied, up to the limit. Returns
 * true when something was copied. */
static bool copy_appended(struct followed *file, int fd, uint64_t size)
{
	char buffer[65536];
	uint64_t end = size < RUNTIME_FILE_LIMIT ? size : RUNTIME_FILE_LIMIT, before = file->copied;

	while (file->copied < end) {
		size_t wanted = end - file->copied < sizeof(buffer) ? (size_t)(end - file->copied)
								    : sizeof(buffer);
		ssize_t n = pread(fd, buffer, wanted, (off_t)file->copied);

		if (n <= 0 || pwrite(file->copy_fd, buffer, (size_t)n, (off_t)file->copied) != n)
			break;
		file->copied += (uint64_t)n;
	}
	if (size > RUNTIME_FILE_LIMIT && !file->limit_reported) {
		file->limit_reported = true;
		report_warning("%s of the target holds more than %llu MB: copied that much only",
			       file->source, RUNTIME_FILE_LIMIT >> 20);
	}
	return file->copied > before;
}

/* Returns true when the file grew (or started again). */
static bool poll_file(struct runtime_files *files, struct followed *file)
{
	int fd = target_root_openat(files->root_fd, file->source, O_RDONLY | O_NONBLOCK);
	struct stat status;
	bool grew = false;

	file->restarted = false;
	if (fd < 0)
		return false;
	if (fstat(fd, &status) == 0 && S_ISREG(status.st_mode)) {
		if (file->copy_fd < 0 || status.st_dev != file->device ||
		    status.st_ino != file->inode || (uint64_t)status.st_size < file->copied) {
			file->restarted = true;
			if (restart_copy(file, &status) < 0) {
				report_error("cannot copy %s of the target to %s: %s", file->source,
					     file->copy, strerror(errno));
				close(fd);
				return false;
			}
		}
		grew = copy_appended(file, fd, (uint64_t)status.st_size) || file->restarted;
	}
	close(fd);
	return grew;
}

static void poll_now(struct runtime_files *files, uint64_t now)
{
	struct followed *map = &files->files[PERF_MAP];

	files->last_poll = now;
	if (poll_file(files, map)) {
		if (files->times_fd < 0)
			files->times_fd =
			    open(files->times_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		/* Started again: so are its times. */
		if (files->times_fd >= 0 && map->restarted && ftruncate(files->times_fd, 0) == 0)
			lseek(files->times_fd, 0, SEEK_SET);
		if (files->times_fd >= 0)
			dprintf(files->times_fd, "%llu %llu\n", (unsigned long long)map->copied,
				(unsigned long long)now);
	}
	poll_file(files, &files->files[JITDUMP]);
}

struct runtime_files *runtime_files_follow(const struct target_process *target, const char *dir)
{
	struct runtime_files *files;

	if (target->root_fd < 0)
		return NULL;
	files = xcalloc(1, sizeof(*files));
	files->root_fd = target->root_fd;
	files->pid = target->pid;
	files->times_fd = -1;
	files->times_path = xasprintf("%s/perf-%d.map.times", dir, (int)target->pid);
	for (int i = 0; i < FOLLOWED_FILES; i++) {
		char name[48];

		snprintf(name, sizeof(name), name_patterns[i], (int)target->namespace_pid);
		snprintf(files->files[i].source, sizeof(files->files[i].source), "/tmp/%s", name);
		snprintf(name, sizeof(name), name_patterns[i], (int)target->pid);
		files->files[i].copy = xasprintf("%s/%s", dir, name);
		files->files[i].copy_fd = -1;
	}
	poll_now(files, monotonic_now());
	return files;
}

void runtime_files_poll(struct runtime_files *files)
{
	uint64_t now;

	if (!files)
		return;
	now = monotonic_now();
	if (now - files->last_poll >= POLL_INTERVAL_NS)
		poll_now(files, now);
}

/* Says whether the jitdump copy ends inside a record: .NET's own jitdump
 * (DOTNET_PerfMapEnabled=1) stops at a stub block it fails to write. */
static void log_jitdump(const struct followed *file, FILE *log)
{
	int fd = open(file->copy, O_RDONLY | O_CLOEXEC);
	struct jitdump *dump = fd < 0 ? NULL : jitdump_new();
	struct jitdump_summary summary;

	if (dump && jitdump_read_more(dump, fd, RUNTIME_FILE_LIMIT) == 0) {
		jitdump_summarize(dump, &summary);
		fprintf(log, "jitdump: %llu bytes, %llu code loads, %llu code moves%s%s\n",
			(unsigned long long)summary.bytes, (unsigned long long)summary.code_loads,
			(unsigned long long)summary.code_moves,
			summary.error ? "; unreadable: " : "", summary.error ? summary.error : "");
		if (summary.missing_bytes)
			fprintf(log,
				"jitdump: ends inside a record that claims %llu bytes more: "
				"code loaded after it is not named from the jitdump\n",
				(unsigned long long)summary.missing_bytes);
	}
	jitdump_free(dump);
	if (fd >= 0)
		close(fd);
}

void runtime_files_finish(struct runtime_files *files, FILE *log)
{
	if (!files)
		return;
	poll_now(files, monotonic_now());
	poll_file(files, &files->files[PERFINFO_MAP]);
	for (int i = 0; i < FOLLOWED_FILES; i++) {
		struct followed *file = &files->files[i];

		if (file->copy_fd >= 0) {
			fprintf(log, "copied %s of the target: %llu bytes\n", file->source,
				(unsigned long long)file->copied);
			close(file->copy_fd);
			if (i == JITDUMP)
				log_jitdump(file, log);
		}
		free(file->copy);
	}
	if (files->times_fd >= 0)
		close(files->times_fd);
	free(files->times_path);
	free(files);
}
