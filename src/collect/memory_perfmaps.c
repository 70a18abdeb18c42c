#include "memory_perfmaps.h"
#include "lookup_budget.h"
#include "memory_perfmap.h"
#include "target_process.h"
#include "util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* A process seen sampled: its memory_perfmap, or NULL when its runtime's
 * memory names nothing (no .NET 9+ runtime). */
struct process_names {
	struct target_process target; /* pid and root_fd alone */
	struct memory_perfmap *map;
};

struct memory_perfmaps {
	size_t last;			  /* the index of the last sample's process */
	struct process_names **processes; /* allocated one by one: maps keep their target */
	size_t count, capacity;
	char *dir;		     /* being written into; NULL: not started */
	struct lookup_budget budget; /* each second's, all processes together */
};

struct memory_perfmaps *memory_perfmaps_new(void)
{
	struct memory_perfmaps *maps = xcalloc(1, sizeof(*maps));

	lookup_budget_init(&maps->budget, 1, MEMORY_PERFMAP_LOOKUP_SHARE,
			   MEMORY_PERFMAP_WALL_SHARE);
	return maps;
}

void memory_perfmaps_start(struct memory_perfmaps *maps, const char *dir)
{
	free(maps->dir);
	maps->dir = xstrdup(dir);
	for (size_t i = 0; i < maps->count; i++)
		if (maps->processes[i]->map &&
		    memory_perfmap_start(maps->processes[i]->map, dir, NULL, NULL) < 0) {
			memory_perfmap_free(maps->processes[i]->map);
			maps->processes[i]->map = NULL;
		}
}

/* The names of `pid`'s code, judged at its first sample. */
static struct process_names *judge(struct memory_perfmaps *maps, pid_t pid)
{
	struct process_names *process = xcalloc(1, sizeof(*process));
	char root[64], error[512];

	process->target.pid = pid;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	process->target.root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pid != getpid() && process->target.root_fd >= 0 &&
	    (process->map = memory_perfmap_open(&process->target, error, sizeof(error)))) {
		memory_perfmap_for_misses(process->map);
		if (memory_perfmap_start(process->map, maps->dir, NULL, NULL) < 0) {
			memory_perfmap_free(process->map);
			process->map = NULL;
		}
	}
	/* The map keeps its own copy of the root. */
	if (process->target.root_fd >= 0)
		close(process->target.root_fd);
	process->target.root_fd = -1;
	return process;
}

/* The process of `pid`, judged now when it is new. A capture holds some
 * hundreds of processes, and samples come in runs of the same one. */
static struct process_names *find(struct memory_perfmaps *maps, pid_t pid)
{
	if (maps->count && maps->processes[maps->last]->target.pid == pid)
		return maps->processes[maps->last];
	for (maps->last = 0; maps->last < maps->count; maps->last++)
		if (maps->processes[maps->last]->target.pid == pid)
			return maps->processes[maps->last];
	grow_array((void **)&maps->processes, &maps->capacity, maps->count + 1,
		   sizeof(*maps->processes));
	maps->processes[maps->count] = judge(maps, pid);
	return maps->processes[maps->count++];
}

void memory_perfmaps_sample(struct memory_perfmaps *maps, const struct perf_sample *sample,
			    const uint64_t *walked, size_t walked_count)
{
	struct process_names *process;
	struct lookup_clock began;

	if (!maps->dir || sample->pid == 0 || sample->pid > INT32_MAX)
		return;
	process = find(maps, (pid_t)sample->pid);
	if (!process->map)
		return;
	/* Each process's lookups keep to their share of the second: so do
	 * all together, or many .NET processes would hold the sampler up. */
	if (!lookup_budget_left(&maps->budget))
		return;
	began = lookup_budget_begin();
	memory_perfmap_sample(process->map, sample, walked, walked_count);
	lookup_budget_spend(&maps->budget, began);
}

void memory_perfmaps_stop(struct memory_perfmaps *maps, FILE *log)
{
	for (size_t i = 0; i < maps->count; i++)
		if (maps->processes[i]->map) {
			fprintf(log, "pid %d: ", (int)maps->processes[i]->target.pid);
			memory_perfmap_stop(maps->processes[i]->map, log);
		}
	free(maps->dir);
	maps->dir = NULL;
}

void memory_perfmaps_free(struct memory_perfmaps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->count; i++) {
		memory_perfmap_free(maps->processes[i]->map);
		free(maps->processes[i]);
	}
	free(maps->processes);
	free(maps->dir);
	free(maps);
}
