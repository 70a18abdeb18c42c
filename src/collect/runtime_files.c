#include "runtime_files.h"
#include "dotnet_diagnostics.h"
#include "jitdump.h"
#include "runtime_directories.h"
#include "target_file.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_INTERVAL_NS 50000000ull
/* A followed file is opened again by its path at least this often. */
#define REOPEN_INTERVAL_NS 1000000000ull
/* A jitdump that ends inside a record and has not grown for this long has
 * stopped: .NET stops writing at a 64 KB stub block it fails to write. */
#define STUCK_AFTER_NS 1000000000ull
#define MAX_REWRITES   5
#define MAX_PADDING    (16u << 20) /* to end a cut-off record in the copy */
#define JITDUMP_HEADER 40

enum followed_file { PERF_MAP, JITDUMP, PERFINFO_MAP, FOLLOWED_FILES };

static const char name_patterns[FOLLOWED_FILES][16] = {"perf-%d.map", "jit-%d.dump",
						       "perfinfo-%d.map"};

/* One file of the target and its copy. The runtime may write the file again
 * from its start (a generation); the copy keeps every generation, one after
 * the other, so that code freed before a rewrite is still named. */
struct followed {
	char *source;  /* as the target sees it (runtime_directories.h) */
	int source_fd; /* kept open from poll to poll (source_file), or -1 */
	uint64_t source_opened_at;
	char *copy;   /* in the capture folder */
	int copy_fd;  /* -1 until the source is first seen */
	dev_t device; /* of the generation being copied */
	ino_t inode;
	unsigned char header[JITDUMP_HEADER]; /* of that generation (jitdump) */
	uint64_t read;			      /* of that generation */
	uint64_t written;		      /* to the copy, all generations */
	bool rewritten;			      /* we asked for a new generation */
	bool stopped;			      /* the copy cannot go on */
	bool limit_reported;
};

struct runtime_files {
	const struct target_process *target;
	struct followed files[FOLLOWED_FILES];
	struct jitdump *jitdump;      /* the jitdump copy's records (borrowed) */
	uint64_t jitdump_read_at;     /* when its latest reading started */
	uint64_t jitdump_still_since; /* when a cut-off jitdump last grew; 0 if whole */
	unsigned rewrites;
	bool rewrite_refused;
	int times_fd; /* perf-<pid>.map.times, -1 until the map is seen */
	char *times_path;
	uint64_t last_poll;
	FILE *log;
};

/* Appends to the copy; a jitdump's machine code is written as zeros
 * (jitdump_add_bytes_clearing_code). */
static bool append_to_copy(struct runtime_files *files, struct followed *file, void *bytes,
			   size_t length)
{
	bool jitdump = file == &files->files[JITDUMP];

	if (jitdump)
		jitdump_add_bytes_clearing_code(files->jitdump, bytes, length);
	if (pwrite(file->copy_fd, bytes, length, (off_t)file->written) != (ssize_t)length) {
		/* The jitdump's parser has taken these bytes: reading them
		 * again later would put it out of step with the file. */
		file->stopped |= jitdump;
		return false;
	}
	file->written += length;
	return true;
}

/* Where the copy of a new generation of the jitdump starts reading: the
 * first generation whole, later ones after their header, once the record
 * the last one was cut inside is padded to its end with zeros (its code
 * bytes: the name and range were written). False when the copy cannot go
 * on. */
static bool join_jitdump_generation(struct runtime_files *files, struct followed *file, int fd)
{
	struct jitdump_summary summary;
	static char zeros[4096]; /* not const: append_to_copy clears code in place */
	uint32_t header_size;

	if (pread(fd, file->header, JITDUMP_HEADER, 0) != JITDUMP_HEADER)
		memset(file->header, 0, JITDUMP_HEADER);
	if (file->written == 0)
		return true;
	jitdump_summarize(files->jitdump, &summary);
	memcpy(&header_size, file->header + 8, sizeof(header_size));
	if (summary.error || summary.missing_bytes > MAX_PADDING || header_size < JITDUMP_HEADER ||
	    header_size > 4096)
		return false;
	for (uint64_t left = summary.missing_bytes; left > 0;) {
		size_t length = left < sizeof(zeros) ? (size_t)left : sizeof(zeros);

		if (!append_to_copy(files, file, zeros, length))
			return false;
		left -= length;
	}
	file->read = header_size;
	return true;
}

/* A perf map generation starts on a line of its own. */
static bool join_perfmap_generation(struct runtime_files *files, struct followed *file)
{
	char last = '\n', newline = '\n';

	if (file->written && pread(file->copy_fd, &last, 1, (off_t)file->written - 1) != 1)
		return false;
	return last == '\n' || append_to_copy(files, file, &newline, 1);
}

static bool start_generation(struct runtime_files *files, struct followed *file, int fd,
			     const struct stat *source)
{
	if (file->copy_fd < 0)
		/* Read too: a perf map's next generation looks at its last byte. */
		file->copy_fd = open(file->copy, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (file->copy_fd < 0) {
		report_error("cannot copy %s of the target to %s: %s", file->source, file->copy,
			     strerror(errno));
		return false;
	}
	file->device = source->st_dev;
	file->inode = source->st_ino;
	file->read = 0;
	file->rewritten = false;
	if (file == &files->files[JITDUMP])
		return join_jitdump_generation(files, file, fd);
	if (file == &files->files[PERF_MAP])
		return join_perfmap_generation(files, file);
	return true;
}

/* A different file, one cut shorter, or a jitdump with a new header. */
static bool is_new_generation(const struct runtime_files *files, const struct followed *file,
			      int fd, const struct stat *source)
{
	unsigned char header[JITDUMP_HEADER];

	if (file->copy_fd < 0 || file->rewritten || source->st_dev != file->device ||
	    source->st_ino != file->inode || (uint64_t)source->st_size < file->read)
		return true;
	return file == &files->files[JITDUMP] && file->read >= JITDUMP_HEADER &&
	       pread(fd, header, sizeof(header), 0) == (ssize_t)sizeof(header) &&
	       memcmp(header, file->header, sizeof(header));
}

/* Copies what the generation holds past what was read, up to the limit. */
static void copy_appended(struct runtime_files *files, struct followed *file, int fd, uint64_t size)
{
	char buffer[65536];

	while (file->read < size && file->written < RUNTIME_FILE_LIMIT) {
		uint64_t wanted = size - file->read;
		ssize_t n;

		if (wanted > sizeof(buffer))
			wanted = sizeof(buffer);
		if (wanted > RUNTIME_FILE_LIMIT - file->written)
			wanted = RUNTIME_FILE_LIMIT - file->written;
		n = pread(fd, buffer, (size_t)wanted, (off_t)file->read);
		if (n <= 0 || !append_to_copy(files, file, buffer, (size_t)n))
			break;
		file->read += (uint64_t)n;
	}
	if (file->written >= RUNTIME_FILE_LIMIT && file->read < size && !file->limit_reported) {
		file->limit_reported = true;
		report_warning("%s of the target holds more than %llu MB: copied that much only",
			       file->source, RUNTIME_FILE_LIMIT >> 20);
	}
}

/* The source, kept open from one poll to the next while it is still the
 * file at its path: opening it inside the target's root costs more than
 * reading what it gained. A runtime writing it again truncates it (its
 * size tells) or puts another file there (the last link of this one goes);
 * after a rewrite was asked for, and every second whatever the links say,
 * the path is opened again. Fills `status` of the file; -1 when there is
 * none. */
static int source_file(struct runtime_files *files, struct followed *file, uint64_t now,
		       struct stat *status)
{
	if (file->source_fd >= 0 && !file->rewritten &&
	    now - file->source_opened_at < REOPEN_INTERVAL_NS &&
	    fstat(file->source_fd, status) == 0 && status->st_nlink > 0)
		return file->source_fd;
	if (file->source_fd >= 0)
		close(file->source_fd);
	file->source_fd = target_file_open(files->target->root_fd, file->source, 0);
	file->source_opened_at = now;
	if (file->source_fd >= 0 && fstat(file->source_fd, status) != 0) {
		close(file->source_fd);
		file->source_fd = -1;
	}
	return file->source_fd;
}

/* Returns true when the copy grew. */
static bool poll_file(struct runtime_files *files, struct followed *file, uint64_t now)
{
	int fd;
	struct stat status;
	uint64_t before = file->written;

	if (file->stopped || (fd = source_file(files, file, now, &status)) < 0)
		return false;
	/* A file older than the target is another process's. */
	if (status.st_mtime + 1 >= files->target->start_time) {
		if (is_new_generation(files, file, fd, &status) &&
		    !start_generation(files, file, fd, &status)) {
			file->stopped = true;
			fprintf(files->log, "%s: a later rewrite could not be joined to the copy\n",
				file->source);
		}
		if (!file->stopped)
			copy_appended(files, file, fd, (uint64_t)status.st_size);
	}
	return file->written > before;
}

/* Asks the runtime to write its files again when its jitdump has stopped
 * inside a record. */
static void repair_stuck_jitdump(struct runtime_files *files, bool grew, uint64_t now)
{
	struct jitdump_summary summary;
	char why[128];

	jitdump_summarize(files->jitdump, &summary);
	if (!summary.missing_bytes || grew) {
		files->jitdump_still_since = summary.missing_bytes ? now : 0;
		return;
	}
	if (!files->jitdump_still_since)
		files->jitdump_still_since = now;
	if (now - files->jitdump_still_since < STUCK_AFTER_NS || files->rewrite_refused ||
	    files->rewrites >= MAX_REWRITES)
		return;
	files->jitdump_still_since = 0;
	files->rewrites++;
	if (dotnet_rewrite_runtime_files(files->target, why, sizeof(why)) < 0) {
		files->rewrite_refused = true;
		fprintf(files->log, "jitdump: stopped inside a record; asking for it again: %s\n",
			why);
		return;
	}
	fprintf(files->log, "jitdump: stopped inside a record; written again whole\n");
	/* The perf map was written again too, maybe already past where its
	 * copy was: nothing else tells. */
	files->files[PERF_MAP].rewritten = true;
}

static void poll_now(struct runtime_files *files, uint64_t now)
{
	struct followed *map = &files->files[PERF_MAP];
	bool grew;

	files->last_poll = now;
	if (poll_file(files, map, now)) {
		if (files->times_fd < 0)
			files->times_fd =
			    open(files->times_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (files->times_fd >= 0)
			dprintf(files->times_fd, "%llu %llu\n", (unsigned long long)map->written,
				(unsigned long long)now);
	}
	files->jitdump_read_at = now;
	grew = poll_file(files, &files->files[JITDUMP], now);
	if (files->files[JITDUMP].copy_fd >= 0)
		repair_stuck_jitdump(files, grew, now);
}

struct runtime_files *runtime_files_follow(const struct target_process *target, const char *dir,
					   struct jitdump *jitdump, FILE *log)
{
	struct runtime_files *files;
	char directory[PATH_MAX];

	if (target->root_fd < 0)
		return NULL;
	files = xcalloc(1, sizeof(*files));
	files->target = target;
	files->log = log;
	files->jitdump = jitdump;
	files->times_fd = -1;
	files->times_path = xasprintf("%s/perf-%d.map.times", dir, (int)target->pid);
	runtime_perfmap_directory(target->pid, directory, sizeof(directory));
	for (int i = 0; i < FOLLOWED_FILES; i++) {
		char name[48];

		snprintf(name, sizeof(name), name_patterns[i], (int)target->namespace_pid);
		files->files[i].source = xasprintf("%s/%s", directory, name);
		snprintf(name, sizeof(name), name_patterns[i], (int)target->pid);
		files->files[i].copy = xasprintf("%s/%s", dir, name);
		files->files[i].copy_fd = -1;
		files->files[i].source_fd = -1;
	}
	if (!files->jitdump)
		files->files[JITDUMP].stopped = true;
	poll_now(files, clock_nanoseconds(CLOCK_MONOTONIC));
	return files;
}

void runtime_files_poll(struct runtime_files *files)
{
	uint64_t now;

	if (!files)
		return;
	now = clock_nanoseconds(CLOCK_MONOTONIC);
	if (now - files->last_poll >= POLL_INTERVAL_NS)
		poll_now(files, now);
}

bool runtime_files_read_jitdump(struct runtime_files *files, uint64_t time)
{
	struct followed *file = &files->files[JITDUMP];
	struct jitdump_summary summary;

	if (files->jitdump_read_at <= time) {
		files->jitdump_read_at = clock_nanoseconds(CLOCK_MONOTONIC);
		poll_file(files, file, files->jitdump_read_at);
	}
	jitdump_summarize(files->jitdump, &summary);
	return summary.valid && !summary.error && !file->stopped;
}

/* Says what the jitdump copy holds, and whether it ends inside a record. */
static void log_jitdump(const struct runtime_files *files)
{
	struct jitdump_summary summary;

	jitdump_summarize(files->jitdump, &summary);
	fprintf(files->log, "jitdump: %llu bytes, %llu code loads, %llu code moves%s%s\n",
		(unsigned long long)summary.bytes, (unsigned long long)summary.code_loads,
		(unsigned long long)summary.code_moves, summary.error ? "; unreadable: " : "",
		summary.error ? summary.error : "");
	if (summary.missing_bytes)
		fprintf(files->log,
			"jitdump: ends inside a record that claims %llu bytes more: code "
			"loaded after it is named from the perf map only\n",
			(unsigned long long)summary.missing_bytes);
}

void runtime_files_finish(struct runtime_files *files)
{
	uint64_t now = clock_nanoseconds(CLOCK_MONOTONIC);

	if (!files)
		return;
	poll_now(files, now);
	poll_file(files, &files->files[PERFINFO_MAP], now);
	for (int i = 0; i < FOLLOWED_FILES; i++) {
		struct followed *file = &files->files[i];

		if (file->source_fd >= 0)
			close(file->source_fd);
		if (file->copy_fd >= 0) {
			fprintf(files->log, "copied %s of the target: %llu bytes\n", file->source,
				(unsigned long long)file->written);
			close(file->copy_fd);
			if (i == JITDUMP)
				log_jitdump(files);
		}
		free(file->copy);
		free(file->source);
	}
	if (files->times_fd >= 0)
		close(files->times_fd);
	free(files->times_path);
	free(files);
}
