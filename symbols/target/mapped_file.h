/* Which file a process mapped, and how to open that very file.
 *
 * A mapping names its file by the path the process used, and by the device
 * and inode it had (MMAP2 records, /proc/<pid>/maps). The path may no longer
 * lead there: the library was deleted or replaced while the process runs (an
 * upgraded image), or the path means something else outside the process's
 * root or mount namespace. The file is accepted only when its inode matches;
 * a live process's /proc/<pid>/map_files/ holds every file it
 * maps, deleted ones included. */
#ifndef PROFCPU_MAPPED_FILE_H
#define PROFCPU_MAPPED_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct file_identity {
	uint32_t major, minor; /* of the device holding the file */
	uint64_t inode;	       /* 0: unknown (an MMAP record, a test) */
};

struct mapped_file {
	const char *path; /* as the process sees it */
	struct file_identity identity;
	pid_t mapped_by; /* a live process that maps it, or 0: opened through
			    its /proc/<pid>/map_files when the path fails */
};

/* True when the open file `fd` is the one `identity` describes (its inode:
 * through overlayfs the device differs), or the identity is unknown. */
bool file_identity_matches(int fd, const struct file_identity *identity);

/* Opens, read-only, the file with `identity` that the live process `pid`
 * maps, through /proc/<pid>/map_files/. -1 when it maps none (or the
 * process is gone, or this caller may not look: that takes CAP_SYS_ADMIN in
 * the process's user namespace). */
int map_files_open(pid_t pid, const struct file_identity *identity);

#endif
