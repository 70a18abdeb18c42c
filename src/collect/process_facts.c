#include "process_facts.h"
#include "cgroup_path.h"
#include "dotnet_diagnostics.h"
#include "runtime_directories.h"
#include "target_process.h"
#include "target_root.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The container and pod of the process, from the first line of its
 * cgroup file that names a container (cgroup_path.h): the container's id
 * in 12 digits, as `podman ps` and `docker ps` show it, and the pod's
 * Kubernetes uid whole or its podman id in 12 digits. */
static void read_container(pid_t pid, struct process_facts *facts)
{
	char text[4096], container[CGROUP_ID_SIZE], pod[CGROUP_ID_SIZE];
	size_t length = cgroup_file_read(pid, text, sizeof(text));

	if (!cgroup_file_container(text, length, container, pod))
		return;
	snprintf(facts->container, sizeof(facts->container), "%.12s", container);
	snprintf(facts->pod, sizeof(facts->pod), "%.*s", strlen(pod) == 64 ? 12 : 36, pod);
}

/* Whether perf-<namespace pid>.map is a regular file in its root, in its
 * /tmp or where DOTNET_PerfMapJitDumpPath says. */
static bool has_perfmap(int root_fd, pid_t pid, pid_t namespace_pid)
{
	char directory[PATH_MAX], path[PATH_MAX + 32];
	struct stat status;
	int fd;
	bool regular;

	runtime_perfmap_directory(pid, directory, sizeof(directory));
	snprintf(path, sizeof(path), "%s/perf-%d.map", directory, (int)namespace_pid);
	fd = target_root_openat(root_fd, path, O_PATH);
	if (fd < 0)
		return false;
	regular = fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
	close(fd);
	return regular;
}

static bool is_node(pid_t pid, const char *comm)
{
	char path[64], executable[4096];
	ssize_t length;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	length = readlink(path, executable, sizeof(executable) - 1);
	if (length > 0) {
		executable[length] = '\0';
		return !strcmp(basename(executable), "node");
	}
	return !strcmp(comm, "node");
}

static void read_runtime(struct process_facts *facts, int root_fd)
{
	if (target_process_runs_dotnet(facts->pid)) {
		struct target_process target = {.pid = facts->pid,
						.namespace_pid = facts->namespace_pid,
						.root_fd = root_fd,
						.runs_dotnet = true};

		facts->runtime = RUNTIME_DOTNET;
		if (root_fd >= 0)
			dotnet_runtime_version(&target, facts->runtime_version,
					       sizeof(facts->runtime_version));
	} else if (is_node(facts->pid, facts->comm)) {
		facts->runtime = RUNTIME_NODE;
	}
}

static int busiest_first(const void *left, const void *right)
{
	const struct process_facts *a = left, *b = right;

	if (a->cpu_percent != b->cpu_percent)
		return a->cpu_percent < b->cpu_percent ? 1 : -1;
	return a->pid - b->pid;
}

size_t process_facts_gather(struct process_facts **facts, unsigned interval_ms)
{
	struct process_entry *before, *after;
	size_t before_count = target_process_list(&before), count;
	struct timespec pause = {interval_ms / 1000, (long)(interval_ms % 1000) * 1000000};
	double ticks_per_percent = (double)sysconf(_SC_CLK_TCK) * interval_ms / 100000.0;

	nanosleep(&pause, NULL);
	count = target_process_list(&after);
	*facts = xcalloc(count ? count : 1, sizeof(**facts));
	for (size_t i = 0; i < count; i++) {
		struct process_facts *process = &(*facts)[i];
		unsigned long long earlier = after[i].cpu_ticks;
		int root_fd;

		for (size_t j = 0; j < before_count; j++)
			if (before[j].pid == after[i].pid)
				earlier = before[j].cpu_ticks;
		process->pid = after[i].pid;
		process->namespace_pid = target_process_namespace_pid(process->pid);
		memcpy(process->comm, after[i].comm, sizeof(process->comm));
		process->cpu_percent = (double)(after[i].cpu_ticks - earlier) / ticks_per_percent;
		root_fd = target_root_open(process->pid);
		process->has_perfmap =
		    root_fd >= 0 && has_perfmap(root_fd, process->pid, process->namespace_pid);
		read_runtime(process, root_fd);
		read_container(process->pid, process);
		if (root_fd >= 0)
			close(root_fd);
	}
	free(before);
	free(after);
	qsort(*facts, count, sizeof(**facts), busiest_first);
	return count;
}

const char *process_runtime_name(enum process_runtime runtime)
{
	static const char *const names[] = {"native", ".NET", "node"};

	return names[runtime];
}
