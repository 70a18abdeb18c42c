#include "target_process.h"
#include "elf_file.h"
#include "target_root.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */

/* Reads a small /proc file into `buffer`; returns its length or -1. */
static ssize_t read_proc_file(pid_t pid, const char *name, char *buffer, size_t size)
{
	char path[64];
	ssize_t length;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	length = read(fd, buffer, size - 1);
	close(fd);
	if (length >= 0)
		buffer[length] = '\0';
	return length;
}

/* The fields profcpu uses of /proc/<pid>/stat. */
struct process_stat {
	int parent;			/* field 4 */
	unsigned long flags;		/* field 9 */
	unsigned long long cpu_ticks;	/* fields 14 + 15: user and system time */
	unsigned long long start_ticks; /* field 22: clock ticks after boot */
};

/* The comm before the fields may hold spaces and parentheses, so parsing
 * starts after the last ')'. */
static int read_stat(pid_t pid, struct process_stat *stat)
{
	char text[1024], *cursor;
	unsigned long long user, system;

	if (read_proc_file(pid, "stat", text, sizeof(text)) < 0 || !(cursor = strrchr(text, ')')) ||
	    sscanf(cursor + 1,
		   " %*c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d "
		   "%llu",
		   &stat->parent, &stat->flags, &user, &system, &stat->start_ticks) != 5)
		return -1;
	stat->cpu_ticks = user + system;
	return 0;
}

unsigned long long target_process_start_ticks(pid_t pid)
{
	struct process_stat stat;

	return read_stat(pid, &stat) < 0 ? 0 : stat.start_ticks;
}

bool target_process_cpu_ticks(pid_t pid, unsigned long long *ticks)
{
	struct process_stat stat;

	if (read_stat(pid, &stat) < 0)
		return false;
	*ticks = stat.cpu_ticks;
	return true;
}

/* Seconds since the epoch of a time given in clock ticks after boot. */
static time_t wall_time_of(unsigned long long ticks_after_boot)
{
	char line[256];
	unsigned long long boot_time = 0;
	FILE *file = fopen("/proc/stat", "re");

	while (file && fgets(line, sizeof(line), file))
		if (sscanf(line, "btime %llu", &boot_time) == 1)
			break;
	if (file)
		fclose(file);
	return (time_t)(boot_time + ticks_after_boot / (unsigned long long)sysconf(_SC_CLK_TCK));
}

pid_t target_process_namespace_pid(pid_t pid)
{
	return target_root_namespace_pid(pid);
}

int target_process_open(pid_t pid, struct target_process *target)
{
	struct process_stat stat;

	*target = (struct target_process){.pid = pid, .root_fd = -1, .pidfd = -1};
	if (pid <= 0) {
		report_error("invalid pid %d: give the id of a running process (-pid N)", (int)pid);
		return -1;
	}
	if (read_stat(pid, &stat) < 0) {
		report_error(
		    "no process with pid %d: 'profcpu ps' lists the ones it sees; in a container "
		    "the profiler must share the target's PID namespace "
		    "(--pid=container:NAME)",
		    (int)pid);
		return -1;
	}
	if (stat.flags & PF_KTHREAD) {
		report_error("pid %d is a kernel thread: profcpu samples user-space processes",
			     (int)pid);
		return -1;
	}
	if (read_proc_file(pid, "comm", target->comm, sizeof(target->comm)) > 0) {
		target->comm[strcspn(target->comm, "\n")] = '\0';
		make_printable(target->comm); /* shown on the user's terminal */
	}
	target->namespace_pid = target_process_namespace_pid(pid);
	target->start_time = wall_time_of(stat.start_ticks);
	target->root_fd = target_root_open(pid);
	if (target->root_fd >= 0 && !target_root_has_openat2())
		report_warning("this kernel has no openat2(2): the target's files are opened "
			       "by a component-by-component walk inside its root instead");
	if (target->root_fd < 0)
		report_warning(
		    "cannot open /proc/%d/root (%s): the target's files and perf map are "
		    "out of reach; give the profiler CAP_SYS_PTRACE",
		    (int)pid, strerror(errno));
	target->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	target->runs_dotnet = target_process_runs_dotnet(pid);
	return 0;
}

void target_process_close(struct target_process *target)
{
	if (target->root_fd >= 0)
		close(target->root_fd);
	if (target->pidfd >= 0)
		close(target->pidfd);
	target->root_fd = target->pidfd = -1;
}

size_t target_process_threads(pid_t pid, pid_t **tids)
{
	char path[64];
	struct dirent *entry;
	size_t count = 0, capacity = 0;
	DIR *directory;

	*tids = NULL;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	directory = opendir(path);
	if (!directory)
		return 0;
	while ((entry = readdir(directory))) {
		if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
			continue;
		grow_array((void **)tids, &capacity, count + 1, sizeof(**tids));
		(*tids)[count++] = (pid_t)atoi(entry->d_name);
	}
	closedir(directory);
	return count;
}

size_t target_process_list(struct process_entry **entries)
{
	struct dirent *entry;
	size_t count = 0, capacity = 0;
	pid_t self = getpid();
	DIR *proc = opendir("/proc");

	*entries = NULL;
	while (proc && (entry = readdir(proc))) {
		struct process_entry process = {.pid = (pid_t)atoi(entry->d_name)};
		struct process_stat stat;

		if (process.pid <= 0 || process.pid == self || read_stat(process.pid, &stat) < 0 ||
		    stat.flags & PF_KTHREAD)
			continue;
		process.parent = (pid_t)stat.parent;
		process.cpu_ticks = stat.cpu_ticks;
		if (read_proc_file(process.pid, "comm", process.comm, sizeof(process.comm)) > 0) {
			process.comm[strcspn(process.comm, "\n")] = '\0';
			make_printable(process.comm);
		}
		grow_array((void **)entries, &capacity, count + 1, sizeof(**entries));
		(*entries)[count++] = process;
	}
	if (proc)
		closedir(proc);
	return count;
}

pid_t target_process_find_by_name(const char *name)
{
	char wanted[16], list[256] = "";
	struct process_entry *processes;
	size_t count = target_process_list(&processes), matches = 0;
	pid_t found = 0;

	snprintf(wanted, sizeof(wanted), "%s", name); /* the kernel keeps 15 characters */
	make_printable(wanted);			      /* as the listed names are */
	for (size_t i = 0; i < count; i++) {
		if (strcmp(processes[i].comm, wanted))
			continue;
		if (matches++ < 8)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d",
				 matches > 1 ? ", " : "", (int)processes[i].pid);
		found = processes[i].pid;
	}
	free(processes);
	if (matches == 1)
		return found;
	if (matches == 0)
		report_error("no process is named '%s' (-processfilter): 'profcpu ps' lists "
			     "the names, or give -pid",
			     name);
	else
		report_error("%zu processes are named '%s' (pids %s%s): choose one with -pid",
			     matches, name, list, matches > 8 ? ", ..." : "");
	return -1;
}

/* target_process_maps_file(): 1 when `mapping` is of the file named
 * `context`. */
static int is_of_file(const struct process_mapping *mapping, void *context)
{
	const char *file_name = context, *slash = strrchr(mapping->path, '/');

	return slash && !strcmp(slash + 1, file_name);
}

bool target_process_maps_file(pid_t pid, const char *file_name)
{
	return target_process_for_each_mapping(pid, is_of_file, (void *)file_name) == 1;
}

/* A single-file app's executable is the runtime's host with the runtime
 * linked in: it exports what debuggers and createdump look up in
 * libcoreclr.so (DotNetRuntimeInfo, g_dacTable). A NativeAOT app exports
 * neither. */
static bool executable_holds_runtime(pid_t pid)
{
	char path[64];
	struct elf_file *executable;
	bool holds;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	executable = elf_file_open(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
	holds = executable && elf_file_exports(executable, "DotNetRuntimeInfo");
	elf_file_close(executable);
	return holds;
}

bool target_process_runs_dotnet(pid_t pid)
{
	return target_process_maps_file(pid, "libcoreclr.so") || executable_holds_runtime(pid);
}
