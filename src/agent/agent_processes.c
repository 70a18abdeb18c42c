#include "agent_processes.h"
#include "agent_spool.h"
#include "dotnet_diagnostics.h"
#include "runtime_code_cache.h"
#include "target_process.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Past this many, the record's other lines are not read (a node runs far
 * fewer .NET processes). */
#define MAX_RECORDED 65536

/* A process younger than this may not have loaded its runtime yet, nor
 * entered its container: it is looked at again in the next period. */
#define SETTLE_SECONDS 1.0
/* A process that had no .NET runtime when looked at may load one later: a
 * host slow to start on a loaded node, a container's entry script that
 * execs dotnet. It is looked at again after twice the wait before, at most
 * this long. */
#define MAX_RUNTIME_LOOK_WAIT 64.0

/* Seconds since boot, the clock of the processes' start times. */
static double uptime_seconds(void)
{
	return (double)clock_nanoseconds(CLOCK_BOOTTIME) / 1e9;
}

/* A process's seconds since it started. */
static double age_seconds(const struct agent_process *process)
{
	return uptime_seconds() - (double)process->start_ticks / (double)sysconf(_SC_CLK_TCK);
}

/* It ran no .NET runtime when looked at now: the next look is later. */
static void look_for_runtime_later(struct agent_process *process)
{
	double wait = process->runtime_look_wait * 2;

	process->runtime_look_wait = wait < SETTLE_SECONDS	    ? SETTLE_SECONDS
				     : wait > MAX_RUNTIME_LOOK_WAIT ? MAX_RUNTIME_LOOK_WAIT
								    : wait;
	process->runtime_look_at = uptime_seconds() + process->runtime_look_wait;
}

/* Its runtime's memory is no longer read. */
static void stop_memory_names(struct agent_process *process)
{
	runtime_code_cache_free(process->memory_code);
	process->memory_code = NULL;
}

static bool same_labels(const struct pod_labels *a, const struct pod_labels *b)
{
	return !strcmp(a->namespace, b->namespace) && !strcmp(a->pod, b->pod) &&
	       !strcmp(a->container, b->container) && a->namespace_source == b->namespace_source &&
	       a->pod_source == b->pod_source;
}

/* Its labels, settled once found in its runtime's state or once it ran a
 * second: runc's init is in its container's cgroup before it enters the
 * container's root, where the last resort's files are. A change of labels
 * has the selection judge it again. False when it is gone: a read after it
 * exited finds nothing, and what was read before stays. */
static bool read_labels(const struct agent_processes *processes, struct agent_process *process)
{
	struct pod_labels labels;

	pod_labels_read(process->pid, processes->state_folders, &labels);
	if (target_process_start_ticks(process->pid) != process->start_ticks)
		return false;
	if (!same_labels(&labels, &process->labels))
		process->selection_decided = false;
	process->labels = labels;
	process->labels_settled = labels.namespace_source == POD_LABEL_RUNTIME ||
				  !process->start_ticks || age_seconds(process) >= SETTLE_SECONDS;
	return true;
}

/* Whether its labels may yet be found in its runtime's state: it is in a
 * container whose state was not read (yet: a folder mounted late). */
static bool awaits_runtime_state(const struct agent_process *process)
{
	return process->labels.container[0] &&
	       process->labels.namespace_source != POD_LABEL_RUNTIME;
}

static void seen_in(struct agent_process *process, unsigned long period)
{
	if (process->last_period < period)
		process->last_period = period;
}

/* Writes the record anew from the list (none: no record). A record that
 * cannot be written costs only what a worker after a crash can turn off. */
static void save_record(const struct agent_processes *processes)
{
	FILE *record;

	if (!processes->record)
		return;
	if (!processes->switched_count) {
		unlink(processes->record);
		return;
	}
	if (!(record = agent_spool_open_file(processes->record, O_WRONLY | O_CREAT | O_TRUNC, "w")))
		return;
	for (size_t i = 0; i < processes->switched_count; i++)
		fprintf(record, "%d %llu\n", (int)processes->switched[i].pid,
			processes->switched[i].start_ticks);
	fclose(record);
}

static struct switched_perfmap *find_switched(struct agent_processes *processes, pid_t pid,
					      unsigned long long start_ticks)
{
	for (size_t i = 0; i < processes->switched_count; i++)
		if (processes->switched[i].pid == pid &&
		    processes->switched[i].start_ticks == start_ticks)
			return &processes->switched[i];
	return NULL;
}

static void add_switched(struct agent_processes *processes, pid_t pid,
			 unsigned long long start_ticks)
{
	if (find_switched(processes, pid, start_ticks))
		return;
	grow_array((void **)&processes->switched, &processes->switched_capacity,
		   processes->switched_count + 1, sizeof(*processes->switched));
	processes->switched[processes->switched_count++] =
	    (struct switched_perfmap){.pid = pid, .start_ticks = start_ticks};
}

static void remove_switched(struct agent_processes *processes, struct switched_perfmap *entry)
{
	*entry = processes->switched[--processes->switched_count];
}

size_t agent_processes_adopt(struct agent_processes *processes, const char *spool_dir)
{
	FILE *record;
	int pid;
	unsigned long long start_ticks;

	free(processes->record);
	processes->record = xasprintf("%s/" AGENT_PERFMAPS_RECORD, spool_dir);
	if ((record = agent_spool_open_file(processes->record, O_RDONLY, "r"))) {
		for (size_t lines = 0;
		     lines < MAX_RECORDED && fscanf(record, "%d %llu", &pid, &start_ticks) == 2;
		     lines++)
			if (pid > 0 && start_ticks &&
			    target_process_start_ticks(pid) == start_ticks)
				add_switched(processes, pid, start_ticks);
		fclose(record);
	}
	save_record(processes); /* without those that exited */
	return processes->switched_count;
}

void agent_processes_turn_off(struct agent_processes *processes, FILE *log)
{
	dotnet_turn_off_perfmaps(processes->switched, processes->switched_count, DOTNET_TURN_OFF_MS,
				 false, log);
	processes->switched_count = 0;
	save_record(processes);
}

struct agent_process *agent_processes_note(struct agent_processes *processes, pid_t pid,
					   unsigned long period)
{
	unsigned long long start_ticks = target_process_start_ticks(pid);
	struct agent_process *process;

	for (size_t i = 0; i < processes->count; i++)
		if (processes->items[i].pid == pid &&
		    processes->items[i].start_ticks == start_ticks) {
			bool new_period = processes->items[i].last_period < period;

			process = &processes->items[i];
			seen_in(process, period);
			/* Read while its runtime still set it up (runc's init before
			 * it enters the container's root): once more, if it runs;
			 * and in a container whose state was not found, once a
			 * period it runs in. */
			if (start_ticks && (!process->labels_settled ||
					    (new_period && awaits_runtime_state(process))))
				read_labels(processes, process);
			return process;
		}
	grow_array((void **)&processes->items, &processes->capacity, processes->count + 1,
		   sizeof(*processes->items));
	process = &processes->items[processes->count++];
	*process = (struct agent_process){
	    .pid = pid, .start_ticks = start_ticks, .first_period = period, .last_period = period};
	read_labels(processes, process);
	if (process->labels.refused_file)
		report_warning("pid %d: %s in its root is %s: its profile has no pod label",
			       (int)pid, process->labels.refused_file, process->labels.refused_why);
	return process;
}

struct agent_process *agent_processes_of_profile(struct agent_processes *processes,
						 const struct process_profile *profile,
						 unsigned long period)
{
	struct agent_process *found = NULL;

	for (size_t i = 0; i < processes->count; i++) {
		struct agent_process *process = &processes->items[i];

		if (process->pid != profile->pid || process->first_period > period)
			continue;
		found = process;
		if (!profile->last_of_pid)
			break; /* the oldest */
	}
	if (!found)
		return agent_processes_note(processes, profile->pid, period);
	seen_in(found, period);
	/* Its pid began anew in the period, not with another start time: it
	 * exec'd another program, maybe another .NET service. */
	if (profile->generation > 0 && found->first_period < period && profile->last_of_pid) {
		struct switched_perfmap *switched =
		    find_switched(processes, found->pid, found->start_ticks);

		if (switched) { /* the runtime it was is gone */
			remove_switched(processes, switched);
			save_record(processes);
		}
		stop_memory_names(found);
		found->runtime_asked = false;
		found->runtime_look_at = found->runtime_look_wait = 0;
		found->labels_settled = false;
		found->selection_decided = false;
	}
	return found;
}

bool agent_processes_settle_labels(struct agent_processes *processes)
{
	bool unsettled = false;

	for (size_t i = 0; i < processes->count; i++) {
		struct agent_process *process = &processes->items[i];

		if (process->labels_settled)
			continue;
		if (!read_labels(processes, process))
			process->labels_settled = true;
		unsettled = unsettled || !process->labels_settled;
	}
	return unsettled;
}

static bool decide(struct agent_processes *processes, struct agent_process *process,
		   const struct agent_selection *selection)
{
	if (process->selection_decided)
		return process->selected;
	process->selected = agent_selection_takes(selection, &process->labels);
	process->selection_decided = true;
	if (!process->selected && !processes->said_container_files &&
	    agent_selection_refuses_container_files(selection, &process->labels)) {
		report_warning("pid %d: its namespace and pod were read from files inside its "
			       "container (no runtime state found for it): --namespace and --pod "
			       "do not take it without --trust-container-labels (said once)",
			       (int)process->pid);
		processes->said_container_files = true;
	}
	return process->selected;
}

bool agent_processes_selected(struct agent_processes *processes, pid_t pid, unsigned long period,
			      const struct agent_selection *selection)
{
	struct agent_process *found = NULL;

	if (!agent_selection_narrows(selection))
		return true;
	for (size_t i = 0; i < processes->count; i++)
		if (processes->items[i].pid == pid)
			found = &processes->items[i]; /* the newest */
	return decide(processes, found ? found : agent_processes_note(processes, pid, period),
		      selection);
}

/* Starts naming the JIT code of `target`, as `processes->names` says:
 * its perf map and jitdump turned on through its diagnostics IPC
 * (perfmap; auto where the IPC answers, its runtime's memory then naming
 * what they leave unnamed, the stubs), or its runtime's memory alone
 * (memory; auto where the IPC does not answer). Said in `log`. Returns
 * true when the agent turned its perf map on. */
static bool start_naming(const struct agent_processes *processes, struct agent_process *process,
			 const struct target_process *target, FILE *log)
{
	char why[PATH_MAX + 128] = "", error[512];
	bool switched = false, unnamed = true;

	if (processes->names == JIT_NAMES_PERFMAP)
		return dotnet_ensure_perfmap(target, log);
	if (processes->names == JIT_NAMES_AUTO)
		switched = dotnet_ensure_perfmap_else(target, log, why, sizeof(why), &unnamed);
	process->memory_code =
	    runtime_code_cache_open(target->pid, target->root_fd, error, sizeof(error));
	if (!unnamed)
		fprintf(log, "JIT names of .NET pid %d: from its perf map%s%s\n", (int)target->pid,
			process->memory_code ? ", and from its runtime's memory for what it leaves "
					       "unnamed; "
					     : "; its runtime's memory cannot be read: ",
			process->memory_code ? runtime_code_cache_runtime_path(process->memory_code)
					     : error);
	else if (process->memory_code)
		fprintf(log, "JIT names of .NET pid %d: from its runtime's memory (%s)%s%s\n",
			(int)target->pid, runtime_code_cache_runtime_path(process->memory_code),
			why[0] ? "; no perf map: " : "", why);
	else
		fprintf(
		    log,
		    "JIT names of .NET pid %d: none, %s%sits runtime's memory cannot be read: %s\n",
		    (int)target->pid, why, why[0] ? "; " : "", error);
	return switched;
}

void agent_processes_ask_runtimes(struct agent_processes *processes, struct resolver *resolver,
				  const struct agent_selection *selection,
				  struct agent_runtime_sessions *sessions, FILE *log)
{
	for (size_t i = 0; i < processes->count; i++) {
		struct agent_process *process = &processes->items[i];
		struct switched_perfmap *switched;
		struct target_process target;

		/* Its labels changed, and the selection leaves it out now: what
		 * the agent turned on in it goes off (on again if taken again). */
		if (process->runtime_asked && agent_selection_narrows(selection) &&
		    !decide(processes, process, selection)) {
			process->runtime_asked = false;
			stop_memory_names(process);
			if ((switched =
				 find_switched(processes, process->pid, process->start_ticks))) {
				dotnet_turn_off_perfmaps(switched, 1, DOTNET_TURN_OFF_MS, false,
							 log);
				remove_switched(processes, switched);
				save_record(processes);
			}
		}
		if (process->runtime_asked || !process->start_ticks ||
		    age_seconds(process) < SETTLE_SECONDS ||
		    uptime_seconds() < process->runtime_look_at)
			continue;
		/* Judged on its settled labels, not on those of its first second;
		 * one left out is judged again in the next round (its labels may
		 * have changed since). */
		if (!process->labels_settled && !read_labels(processes, process))
			continue;
		if (agent_selection_narrows(selection) && !decide(processes, process, selection))
			continue;
		if (!target_process_runs_dotnet(process->pid)) {
			look_for_runtime_later(process);
			continue;
		}
		process->runtime_asked = true;
		if (target_process_open(process->pid, &target) == 0) {
			if (start_naming(processes, process, &target, log)) {
				add_switched(processes, process->pid, process->start_ticks);
				save_record(processes);
			}
			target_process_close(&target);
			/* The runtime writes its perf map anew: read from the start. */
			resolver_forget_process(resolver, process->pid);
			if (sessions)
				agent_runtime_sessions_watch(sessions, process->pid);
		}
	}
}

void agent_processes_prune(struct agent_processes *processes, unsigned long period,
			   struct resolver *resolver)
{
	size_t kept = 0;

	for (size_t i = 0; i < processes->count; i++) {
		struct agent_process *process = &processes->items[i];

		if (process->last_period > period ||
		    (process->start_ticks &&
		     target_process_start_ticks(process->pid) == process->start_ticks))
			processes->items[kept++] = *process;
		else {
			stop_memory_names(process);
			resolver_forget_process(resolver, process->pid);
		}
	}
	processes->count = kept;
	kept = processes->switched_count;
	for (size_t i = processes->switched_count; i-- > 0;)
		if (target_process_start_ticks(processes->switched[i].pid) !=
		    processes->switched[i].start_ticks)
			remove_switched(processes, &processes->switched[i]);
	if (kept != processes->switched_count)
		save_record(processes);
}

struct runtime_code_cache *agent_processes_memory_code(const struct agent_processes *processes,
						       pid_t pid)
{
	struct runtime_code_cache *found = NULL;

	for (size_t i = 0; i < processes->count; i++)
		if (processes->items[i].pid == pid)
			found = processes->items[i].memory_code; /* the newest's */
	return found;
}

void agent_processes_release(struct agent_processes *processes)
{
	for (size_t i = 0; i < processes->count; i++)
		stop_memory_names(&processes->items[i]);
	free(processes->items);
	free(processes->switched);
	free(processes->record);
	*processes = (struct agent_processes){0};
}
