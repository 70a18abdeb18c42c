#include "kernel_symbols_boot_cache.h"
#include "kernel_symbols_table.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_FOLDER "profcpu"
#define CACHE_FILE   "kallsyms-core"
#define CACHE_TITLE  "# profcpu: the core kernel's /proc/kallsyms text symbols, a table\n"

enum { HEADER_LINE = 640 }; /* "# first " and a kallsyms line */

static FILE *open_proc_kallsyms(void)
{
	return fopen("/proc/kallsyms", "re");
}

/* The first line of /proc/kallsyms, without its newline; "" when none. The
 * kernel formats only the few lines one small read takes. */
static void read_first_line(char *line, size_t size)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	ssize_t length = fd >= 0 ? read(fd, line, size - 1) : -1;

	line[length > 0 ? length : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (fd >= 0)
		close(fd);
}

/* A line that names an address: kallsyms shows zeros to readers without
 * CAP_SYSLOG. */
static bool shows_address(const char *line)
{
	size_t digits = strspn(line, "0123456789abcdef");

	return digits > 0 && line[digits] == ' ' && strspn(line, "0") < digits;
}

/* The cache folder, opened (and made, 0700) when it is this user's alone;
 * -1 otherwise. */
static int open_cache_folder(void)
{
	const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char path[4096];
	struct stat status;
	int fd;

	if (cache && *cache == '/')
		snprintf(path, sizeof(path), "%s/" CACHE_FOLDER, cache);
	else if (home && *home == '/')
		snprintf(path, sizeof(path), "%s/.cache/" CACHE_FOLDER, home);
	else
		return -1;
	if (mkdir(path, 0700) < 0) {
		/* ~/.cache itself may be missing */
		char *slash = strrchr(path, '/');

		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
		mkdir(path, 0700);
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 &&
	    (fstat(fd, &status) < 0 || status.st_uid != geteuid() || (status.st_mode & 077))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The header of the copy written on this boot for a kallsyms whose first
 * line is `first`. */
static int format_header(char *header, size_t size, const char *boot_id, const char *first)
{
	return snprintf(header, size, CACHE_TITLE "# boot_id %s\n# first %s\n", boot_id, first);
}

/* The copy's table, when it was written on this boot for a kallsyms whose
 * first line is `first`; NULL otherwise. */
static struct kernel_symbols_table *open_copy(int folder, const char *boot_id, const char *first)
{
	int fd = openat(folder, CACHE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char header[3 * HEADER_LINE], expected[3 * HEADER_LINE];
	int length = format_header(expected, sizeof(expected), boot_id, first);
	struct kernel_symbols_table *table = NULL;
	struct stat status;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_uid == geteuid() &&
	    !(status.st_mode & 077) && length > 0 && (size_t)length < sizeof(expected) &&
	    pread(fd, header, (size_t)length, 0) == length &&
	    !memcmp(header, expected, (size_t)length))
		table = kernel_symbols_table_map(fd, (size_t)length);
	close(fd);
	return table;
}

/* Writes the copy from `symbols` (read from /proc/kallsyms in part) under
 * a temporary name, renamed when whole. */
static void write_copy(int folder, struct kernel_symbols *symbols, const char *boot_id,
		       const char *first)
{
	char temporary[64], header[3 * HEADER_LINE];
	int fd;
	FILE *copy;
	bool written;

	snprintf(temporary, sizeof(temporary), CACHE_FILE ".%d.partial", (int)getpid());
	fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (!(copy = fdopen(fd, "w"))) {
		close(fd);
		unlinkat(folder, temporary, 0);
		return;
	}
	format_header(header, sizeof(header), boot_id, first);
	fputs(header, copy);
	written = kernel_symbols_write_core(symbols, copy);
	if (fclose(copy) == 0 && written)
		renameat(folder, temporary, folder, CACHE_FILE);
	else
		unlinkat(folder, temporary, 0);
}

struct kernel_symbols *kernel_symbols_open_kallsyms(const char *boot_id)
{
	char first[HEADER_LINE - 16];
	struct kernel_symbols *symbols = NULL;
	struct kernel_symbols_table *table;
	FILE *listing;
	int folder;

	read_first_line(first, sizeof(first));
	folder = shows_address(first) && *boot_id ? open_cache_folder() : -1;
	if (folder < 0)
		return (listing = open_proc_kallsyms()) ? kernel_symbols_open(listing, true) : NULL;
	if ((table = open_copy(folder, boot_id, first))) {
		symbols = kernel_symbols_open_table(table, open_proc_kallsyms);
	} else if ((listing = open_proc_kallsyms()) &&
		   (symbols = kernel_symbols_open(listing, true))) {
		write_copy(folder, symbols, boot_id, first);
	}
	close(folder);
	return symbols;
}
