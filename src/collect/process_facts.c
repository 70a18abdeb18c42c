#include "process_facts.h"
#include "dotnet_diagnostics.h"
#include "target_process.h"
#include "target_root.h"
#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The first run of exactly `length` hex digits in `text`, or NULL. */
static const char *find_hex_run(const char *text, size_t length)
{
	for (const char *cursor = text; *cursor;) {
		size_t run = 0;

		while (isxdigit((unsigned char)cursor[run]))
			run++;
		if (run == length)
			return cursor;
		cursor += run ? run : 1;
	}
	return NULL;
}

/* The pod uid after a "pod" in `line` (36 characters of hex digits and '-',
 * or '_' under systemd's cgroup driver), written with '-'; false if none.
 * "kubepods" itself is skipped: no uid follows it. */
static bool find_pod_uid(const char *line, char *uid, size_t size)
{
	for (const char *pod = strstr(line, "pod"); pod; pod = strstr(pod + 3, "pod")) {
		size_t length = strspn(pod + 3, "0123456789abcdef-_");

		if (length < 36)
			continue;
		snprintf(uid, size, "%.36s", pod + 3);
		for (char *c = uid; *c; c++)
			*c = *c == '_' ? '-' : *c;
		return true;
	}
	return false;
}

/* The container id and pod uid in the process's cgroup path: runtimes name
 * the container's cgroup after its 64-digit id (libpod-<id>.scope,
 * cri-containerd-<id>.scope, docker/<id>), and the kubelet the pod's after
 * its uid (pod<uid>). */
static void read_container(pid_t pid, struct process_facts *facts)
{
	char path[64], line[1024];
	FILE *cgroup;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	cgroup = fopen(path, "re");
	while (cgroup && fgets(line, sizeof(line), cgroup)) {
		const char *id = find_hex_run(line, 64);

		if (id && !facts->container[0])
			snprintf(facts->container, sizeof(facts->container), "%.12s", id);
		if (!facts->pod[0])
			find_pod_uid(line, facts->pod, sizeof(facts->pod));
	}
	if (cgroup)
		fclose(cgroup);
}

/* Whether /tmp/perf-<namespace pid>.map is a regular file in its root. */
static bool has_perfmap(int root_fd, pid_t namespace_pid)
{
	char path[64];
	struct stat status;
	int fd;
	bool regular;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)namespace_pid);
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
	if (target_process_maps_file(facts->pid, "libcoreclr.so")) {
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
		process->has_perfmap = root_fd >= 0 && has_perfmap(root_fd, process->namespace_pid);
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
