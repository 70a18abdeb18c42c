#include "kernel_symbols_copy.h"
#include "kernel_symbols_boot_cache.h"
#include "symbols_log.h"
#include "target_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The last line of a copy written to its end: the capture's replay looked
 * up every kernel address it has. */
#define COPY_COMPLETE "# complete\n"

/* Which boot of which kernel: a listing's addresses hold for one boot. */
struct kernel_identity {
	char boot_id[64];
	char release[128];
	bool complete; /* a copy's: it ends with COPY_COMPLETE */
};

static void read_first_line(const char *path, char *line, size_t size)
{
	FILE *file = fopen(path, "re");

	line[0] = '\0';
	if (file && fgets(line, (int)size, file))
		line[strcspn(line, "\n")] = '\0';
	if (file)
		fclose(file);
}

static void identify_this_kernel(struct kernel_identity *identity)
{
	struct utsname names;

	read_first_line("/proc/sys/kernel/random/boot_id", identity->boot_id,
			sizeof(identity->boot_id));
	snprintf(identity->release, sizeof(identity->release), "%s",
		 uname(&names) == 0 ? names.release : "");
}

/* The comment lines of a copy; fields stay empty when absent. Leaves the
 * copy at its start. */
static void identify_copy(FILE *copy, struct kernel_identity *identity)
{
	char line[256];

	*identity = (struct kernel_identity){0};
	for (size_t lines = 0; lines < KERNEL_SYMBOLS_MAX_LINES && fgets(line, sizeof(line), copy);
	     lines++) {
		identity->complete = !strcmp(line, COPY_COMPLETE);
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "# boot_id ", 10))
			snprintf(identity->boot_id, sizeof(identity->boot_id), "%.*s",
				 (int)sizeof(identity->boot_id) - 1, line + 10);
		else if (!strncmp(line, "# release ", 10))
			snprintf(identity->release, sizeof(identity->release), "%.*s",
				 (int)sizeof(identity->release) - 1, line + 10);
	}
	rewind(copy);
}

/* /proc/kallsyms shows addresses to readers with CAP_SYSLOG while
 * kernel.kptr_restrict is 0 or 1, and to nobody at 2; being root in a
 * container is not enough without the capability. */
static void say_no_kernel_addresses(FILE *log)
{
	char level[8];

	read_first_line("/proc/sys/kernel/kptr_restrict", level, sizeof(level));
	if (level[0] == '2')
		symbols_log(log,
			    "/proc/kallsyms shows no addresses: kernel frames stay unnamed "
			    "while kernel.kptr_restrict is 2 on the host (set it to 1 and give "
			    "profcpu CAP_SYSLOG, or 0)");
	else
		symbols_log(log, "/proc/kallsyms shows no addresses: kernel frames stay unnamed; "
				 "profcpu needs CAP_SYSLOG to read them (--cap-add SYSLOG; in "
				 "Kubernetes, capabilities add SYSLOG)");
}

/* After a failed call that set errno. */
static void say_copy_not_written(const char *copy_path, FILE *log)
{
	symbols_log(log,
		    "cannot write %s: %s; this capture's kernel frames will not be named after a "
		    "reboot or on another machine",
		    copy_path, strerror(errno));
}

/* Where a copy is written until it is whole, as every output of the folder
 * is: a copy cut short (a full disk, an abort) is never found under its
 * name. Freed by the caller. */
static char *temporary_copy_path(const char *copy_path)
{
	char *path;

	return asprintf(&path, "%s.partial", copy_path) < 0 ? NULL : path;
}

static void start_copy(struct kernel_symbols *symbols, const char *copy_path,
		       const struct kernel_identity *identity, FILE *log)
{
	char *temporary_path = temporary_copy_path(copy_path);
	FILE *copy = temporary_path ? fopen(temporary_path, "we") : NULL;

	unlink(copy_path); /* an earlier capture's, in a reused folder */
	if (!copy) {
		say_copy_not_written(copy_path, log);
		free(temporary_path);
		return;
	}
	free(temporary_path);
	fprintf(copy, "# boot_id %s\n# release %s\n", identity->boot_id, identity->release);
	kernel_symbols_copy_to(symbols, copy, COPY_COMPLETE);
}

void kernel_symbols_start_copy(struct kernel_symbols *symbols, const char *copy_path, FILE *log)
{
	struct kernel_identity here;

	identify_this_kernel(&here);
	start_copy(symbols, copy_path, &here, log);
}

void kernel_symbols_finish_copy(struct kernel_symbols *symbols, const char *copy_path, FILE *log)
{
	char *temporary_path;

	if (!symbols || !kernel_symbols_copying(symbols))
		return;
	temporary_path = temporary_copy_path(copy_path);
	if (kernel_symbols_end_copy(symbols) < 0 || !temporary_path ||
	    rename(temporary_path, copy_path) < 0) {
		say_copy_not_written(copy_path, log);
		if (temporary_path)
			unlink(temporary_path);
	}
	free(temporary_path);
}

/* The capture's copy, when it has one; NULL otherwise. A copy is input from
 * anywhere: a regular file only, opened non-blocking. */
static FILE *open_copy(const char *copy_path)
{
	int fd = target_file_open(-1, copy_path, 0);
	FILE *copy = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (fd >= 0 && !copy)
		close(fd);
	return copy;
}

static struct kernel_symbols *read_copy(FILE *copy, const char *copy_path,
					const struct kernel_identity *captured,
					const struct kernel_identity *here, FILE *log)
{
	struct kernel_symbols *symbols = kernel_symbols_open(copy, false);

	if (!symbols)
		symbols_log(log, "%s names no kernel address: kernel frames stay unnamed",
			    copy_path);
	else if (strcmp(captured->boot_id, here->boot_id))
		symbols_log(log,
			    "kernel frames named from %s, the symbols of the kernel that made the "
			    "capture (%s, boot %s; this machine runs %s, boot %s)",
			    copy_path, captured->release, captured->boot_id, here->release,
			    here->boot_id);
	else
		symbols_log(log, "kernel frames named from %s, written when this capture was made",
			    copy_path);
	return symbols;
}

struct kernel_symbols *kernel_symbols_for_capture(const char *copy_path, bool write_copy, FILE *log)
{
	struct kernel_identity here, captured;
	struct kernel_symbols *symbols;
	FILE *copy = copy_path && !write_copy ? open_copy(copy_path) : NULL;

	identify_this_kernel(&here);
	if (copy) {
		identify_copy(copy, &captured);
		/* An interrupted collect leaves a copy that may lack names. */
		if (!captured.complete && !strcmp(captured.boot_id, here.boot_id) &&
		    (symbols = kernel_symbols_open_kallsyms(here.boot_id))) {
			fclose(copy);
			return symbols;
		}
		return read_copy(copy, copy_path, &captured, &here, log);
	}
	symbols = kernel_symbols_open_kallsyms(here.boot_id);
	if (!symbols) {
		say_no_kernel_addresses(log);
		if (write_copy)
			unlink(copy_path); /* an earlier capture's, in a reused folder */
	} else if (write_copy) {
		start_copy(symbols, copy_path, &here, log);
	}
	return symbols;
}
