#include "memory_perfmaps.h"
#include "lookup_budget.h"
#include "memory_perfmap.h"
#include "target_process.h"
#include "util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SECOND_NS 1000000000ull

/* The most time between two looks at a process without a runtime read. */
#define MAX_LOOK_WAIT_NS (64 * SECOND_NS)

/* A process seen sampled: its memory_perfmap, or NULL when its runtime's
 * memory names nothing (no .NET 10+ runtime, or not yet). */
struct process_names {
	struct target_process target; /* pid and root_fd alone */
	unsigned long long start_ticks;
	struct memory_perfmap *map;
	/* When it is looked at again (CLOCK_MONOTONIC ns): whether its pid
	 * is another process's now, and, without a map, whether its runtime
	 * reads now (a host that runs a while before it loads the runtime) */
	uint64_t look_at, look_wait;
	bool gone; /* its pid is another's */
};

struct memory_perfmaps {
	size_t last;			  /* the index of the last sample's process */
	struct process_names **processes; /* allocated one by one: maps keep their target */
	size_t count, capacity;
	char *dir;		     /* being written into; NULL: not started */
	FILE *log;		     /* the capture's */
	struct lookup_budget budget; /* each second's, all processes together */
};

struct memory_perfmaps *memory_perfmaps_new(void)
{
	struct memory_perfmaps *maps = xcalloc(1, sizeof(*maps));

	lookup_budget_init(&maps->budget, 1, MEMORY_PERFMAP_LOOKUP_SHARE,
			   MEMORY_PERFMAP_WALL_SHARE);
	return maps;
}

void memory_perfmaps_start(struct memory_perfmaps *maps, const char *dir, FILE *log)
{
	free(maps->dir);
	maps->dir = xstrdup(dir);
	maps->log = log;
	for (size_t i = 0; i < maps->count; i++)
		if (maps->processes[i]->map && !maps->processes[i]->gone &&
		    memory_perfmap_start(maps->processes[i]->map, dir, NULL, NULL) < 0) {
			memory_perfmap_free(maps->processes[i]->map);
			maps->processes[i]->map = NULL;
		}
}

/* Opens the names of `process`'s code where its runtime reads. */
static void judge(struct memory_perfmaps *maps, struct process_names *process)
{
	pid_t pid = process->target.pid;
	char root[64], error[512];

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
}

/* A process of `pid` seen sampled for the first time. */
static struct process_names *add(struct memory_perfmaps *maps, pid_t pid, uint64_t now)
{
	struct process_names *process = xcalloc(1, sizeof(*process));

	process->target.pid = pid;
	process->start_ticks = target_process_start_ticks(pid);
	judge(maps, process);
	process->look_wait = SECOND_NS;
	process->look_at = now + process->look_wait;
	grow_array((void **)&maps->processes, &maps->capacity, maps->count + 1,
		   sizeof(*maps->processes));
	maps->last = maps->count;
	maps->processes[maps->count++] = process;
	return process;
}

/* Looks at `process` again: its pid may be another process's (then a new
 * one is added), its runtime may read now. Once a second with a map, after
 * 1, 2, 4 ... 64 s without. */
static struct process_names *look_again(struct memory_perfmaps *maps, struct process_names *process,
					uint64_t now)
{
	if (target_process_start_ticks(process->target.pid) != process->start_ticks) {
		/* its file is the new process's from now on */
		process->gone = true;
		if (process->map) {
			fprintf(maps->log, "pid %d (exited, the pid given to another): ",
				(int)process->target.pid);
			memory_perfmap_stop(process->map, maps->log);
		}
		return add(maps, process->target.pid, now);
	}
	if (!process->map) {
		judge(maps, process);
		if (process->look_wait < MAX_LOOK_WAIT_NS)
			process->look_wait *= 2;
	}
	if (process->map)
		process->look_wait = SECOND_NS;
	process->look_at = now + process->look_wait;
	return process;
}

/* The process of `pid`, judged now when it is new, looked at again when
 * its time came. A capture holds some hundreds of processes, and samples
 * come in runs of the same one. */
static struct process_names *find(struct memory_perfmaps *maps, pid_t pid)
{
	struct process_names *process = NULL;
	uint64_t now = clock_nanoseconds(CLOCK_MONOTONIC);

	if (maps->count && maps->processes[maps->last]->target.pid == pid &&
	    !maps->processes[maps->last]->gone)
		process = maps->processes[maps->last];
	for (size_t i = 0; !process && i < maps->count; i++)
		if (maps->processes[i]->target.pid == pid && !maps->processes[i]->gone) {
			maps->last = i;
			process = maps->processes[i];
		}
	if (!process)
		return add(maps, pid, now);
	return now >= process->look_at ? look_again(maps, process, now) : process;
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
		if (maps->processes[i]->map && !maps->processes[i]->gone) {
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
