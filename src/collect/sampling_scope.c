#include "sampling_scope.h"
#include "container_name.h"
#include "dotnet_diagnostics.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Containers sit a few levels down (machine.slice/libpod-ID.scope,
 * kubepods/burstable/podX/ID): deep enough for those, bounded for speed. */
#define MAX_CGROUP_DEPTH 8

int sampling_scope_open(const char *cgroup, struct target_process *target)
{
	struct stat status;
	const char *name;

	*target = (struct target_process){.pid = TARGET_EVERY_PROCESS,
					  .namespace_pid = TARGET_EVERY_PROCESS,
					  .root_fd = -1,
					  .pidfd = -1,
					  .cgroup = cgroup,
					  .start_time = time(NULL)};
	if (cgroup && (stat(cgroup, &status) < 0 || !S_ISDIR(status.st_mode))) {
		report_error("--cgroup %s: not a cgroup directory (%s); give one under "
			     "/sys/fs/cgroup, e.g. /sys/fs/cgroup/machine.slice/libpod-ID.scope",
			     cgroup, errno ? strerror(errno) : "not a directory");
		return -1;
	}
	name = cgroup ? strrchr(cgroup, '/') : NULL;
	snprintf(target->comm, sizeof(target->comm), "%s",
		 !cgroup	   ? "every process"
		 : name && name[1] ? name + 1
				   : cgroup);
	return 0;
}

/* The processes of a cgroup directory (its cgroup.procs), or of the
 * machine. Returns how many were put in `*pids` (malloc'd). */
static size_t processes_in_scope(const char *cgroup, pid_t **pids)
{
	size_t count = 0, capacity = 0;

	*pids = NULL;
	if (cgroup) {
		char *path = xasprintf("%s/cgroup.procs", cgroup);
		FILE *procs = fopen(path, "re");
		int pid;

		while (procs && fscanf(procs, "%d", &pid) == 1) {
			grow_array((void **)pids, &capacity, count + 1, sizeof(**pids));
			(*pids)[count++] = pid;
		}
		if (procs)
			fclose(procs);
		free(path);
	} else {
		struct process_entry *processes;
		size_t listed = target_process_list(&processes);

		*pids = xcalloc(listed + 1, sizeof(**pids));
		for (; count < listed; count++)
			(*pids)[count] = processes[count].pid;
		free(processes);
	}
	return count;
}

size_t sampling_scope_enable_perfmaps(const struct target_process *target, FILE *log,
				      struct switched_perfmap **switched)
{
	pid_t *pids;
	size_t count = processes_in_scope(target->cgroup, &pids), turned_on = 0;

	*switched = xcalloc(count ? count : 1, sizeof(**switched));
	for (size_t i = 0; i < count; i++) {
		struct target_process process;

		if (!target_process_runs_dotnet(pids[i]) ||
		    target_process_open(pids[i], &process) < 0)
			continue;
		if (dotnet_ensure_perfmap(&process, log))
			(*switched)[turned_on++] =
			    (struct switched_perfmap){pids[i], target_process_start_ticks(pids[i])};
		target_process_close(&process);
	}
	free(pids);
	return turned_on;
}

/* Depth-first search under `path` for a directory whose name holds `id`. */
static char *find_directory_containing(const char *path, const char *id, int depth)
{
	DIR *directory = depth < MAX_CGROUP_DEPTH ? opendir(path) : NULL;
	struct dirent *entry;
	char *found = NULL;

	while (directory && !found && (entry = readdir(directory))) {
		char *child;

		if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
			continue;
		child = xasprintf("%s/%s", path, entry->d_name);
		if (strstr(entry->d_name, id))
			found = xstrdup(child);
		else
			found = find_directory_containing(child, id, depth + 1);
		free(child);
	}
	if (directory)
		closedir(directory);
	return found;
}

/* perf events follow the v1 perf_event hierarchy when one is mounted, else
 * cgroup v2: mounted at /sys/fs/cgroup, or /sys/fs/cgroup/unified on
 * hybrid machines. */
static const char *perf_event_hierarchy(void)
{
	static const char *const candidates[] = {"/sys/fs/cgroup/perf_event",
						 "/sys/fs/cgroup/unified", "/sys/fs/cgroup"};

	for (size_t i = 0; i < sizeof(candidates) / sizeof(*candidates); i++) {
		char *marker = xasprintf("%s/%s", candidates[i],
					 i == 0 ? "cgroup.procs" : "cgroup.controllers");
		bool usable = access(marker, F_OK) == 0;

		free(marker);
		if (usable)
			return candidates[i];
	}
	return NULL;
}

/* --container NAME: the cgroup of the one running container of that name
 * (container_name.h reads the runtimes' state), or NULL: after one line
 * when a container has that name (*named), else silently. */
static char *named_container_cgroup(const char *hierarchy, const char *name, bool *named)
{
	struct container_ids found_ids = {0};
	char *found = NULL, *running = NULL;
	size_t count = container_name_find(name, &found_ids), running_count = 0;

	for (size_t i = 0; i < count; i++) {
		if (!(found = find_directory_containing(hierarchy, found_ids.ids[i], 0)))
			continue;
		if (running_count++)
			free(found);
		else
			running = found;
	}
	*named = count > 0;
	if (count && !running_count)
		report_error("--container %s: its container (%.12s) is not running", name,
			     found_ids.ids[0]);
	else if (running_count > 1) {
		report_error("--container %s: %zu running containers have that name: give one's id "
			     "(podman ps, crictl ps --name %s)",
			     name, running_count, name);
		free(running);
		running = NULL;
	}
	free(found_ids.ids);
	return running;
}

char *sampling_scope_container_cgroup(const char *container_id)
{
	const char *hierarchy = perf_event_hierarchy();
	const char *scheme_end = strstr(container_id, "://");
	bool named = false;
	char *found;

	/* kubectl's containerID: containerd://ID, cri-o://ID, docker://ID. */
	if (scheme_end)
		container_id = scheme_end + 3;
	if (strlen(container_id) < 4 || strchr(container_id, '/')) {
		report_error("--container %s: give the container's id (at least 4 characters, "
			     "as podman ps or docker ps show it) or its name",
			     container_id);
		return NULL;
	}
	if (!hierarchy) {
		report_error("--container: no cgroup hierarchy for perf events under "
			     "/sys/fs/cgroup; give its cgroup directory with --cgroup PATH");
		return NULL;
	}
	if (container_name_valid(container_id)) {
		found = named_container_cgroup(hierarchy, container_id, &named);
		if (named)
			return found;
	}
	/* An id, or a part of a cgroup directory's name. */
	found = find_directory_containing(hierarchy, container_id, 0);
	if (!found)
		report_error("--container %s: no %scgroup under %s names it; is it running? (give "
			     "its id as podman ps, crictl ps or kubectl show it, or its cgroup "
			     "directory with --cgroup PATH)",
			     container_id,
			     container_name_valid(container_id)
				 ? "container (podman, CRI-O, containerd, docker) and no "
				 : "",
			     hierarchy);
	return found;
}
