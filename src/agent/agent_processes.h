/* The processes a worker of profcpu agent has seen sampled, each known by
 * pid and start time (a reused pid is another process), with what is read
 * once in its life: its pod labels (pod_labels.h), read when its first
 * sample is seen, so a process that exits before its period is sent keeps
 * them, and again until they settle (found in the runtime's state, or it
 * ran a second), then, in a container whose runtime's state was not
 * found, once a period it runs in; whether the selection takes it, judged
 * again whenever its labels change; and, for a .NET process the selection
 * takes, how its JIT code is named (again after it exec'd: another
 * runtime): from its runtime's memory (agent_memory_names.h), or its perf
 * map switched on. An entry goes when its process exits, with what the
 * resolver kept of it, so memory follows the processes that run.
 *
 * The perf maps and jitdumps the agent turned on (not those the targets'
 * owners did) are listed, in memory and in a record in the spool: turned
 * off when the selection leaves their process out, and at the worker's
 * end; a worker started after one that died takes the record over. */
#ifndef PROFCPU_AGENT_PROCESSES_H
#define PROFCPU_AGENT_PROCESSES_H

#include "agent_memory_names.h"
#include "agent_runtime_sessions.h"
#include "agent_selection.h"
#include "dotnet_diagnostics.h"
#include "pod_labels.h"
#include "process_profiles.h"
#include "resolver.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct agent_process {
	pid_t pid;
	unsigned long long start_ticks; /* 0: gone before it was seen */
	struct pod_labels labels;
	bool labels_settled; /* found in the runtime's state, or read when it had run a second */
	bool runtime_asked;  /* it runs .NET: its JIT names chosen, its events recorded */
	/* its JIT code named from its runtime's memory; NULL: not */
	struct runtime_code_cache *memory_code;
	double runtime_look_at;	  /* when to look for its runtime again (seconds since boot) */
	double runtime_look_wait; /* the wait before that look */
	bool selection_decided;	  /* `selected` holds whether the selection takes it */
	bool selected;
	unsigned long first_period; /* the first period it was seen sampled in */
	unsigned long last_period;  /* the last one */
};

struct agent_processes {
	struct agent_process *items;
	size_t count, capacity;
	enum jit_names names; /* where JIT code is named (--names) */
	/* More folders of the runtimes' OCI configs (--container-state), or NULL. */
	const struct string_list *state_folders;
	bool said_container_files; /* that the selection refused such labels */
	/* The processes whose perf map the agent turned on, to turn off. */
	struct switched_perfmap *switched;
	size_t switched_count, switched_capacity;
	char *record; /* the spool's file that lists them too, or NULL */
};

/* The record of perf maps turned on, in the spool: "PID START_TICKS" lines. */
#define AGENT_PERFMAPS_RECORD "perfmaps-on"

/* Takes over the perf maps that an earlier worker (one that died, or a
 * killed agent's) turned on, from the record in `spool_dir`, of the
 * processes that still run; from now on the record is kept there. Returns
 * how many were taken. */
size_t agent_processes_adopt(struct agent_processes *processes, const char *spool_dir);

/* Turns off every perf map and jitdump the agent turned on (bounded:
 * DOTNET_TURN_OFF_MS in all), said in `log`, and empties the record. */
void agent_processes_turn_off(struct agent_processes *processes, FILE *log);

/* The entry of the process that has `pid` now, sampled in period number
 * `period`, made on its first call: its labels read, and a refused pod
 * file said on stderr. */
struct agent_process *agent_processes_note(struct agent_processes *processes, pid_t pid,
					   unsigned long period);

/* The entry of the process whose profile of period number `period` is
 * `profile`: of the processes seen with its pid by then, the newest for
 * the pid's last process, else the oldest (its pid was reused within the
 * period). A process that exec'd in the period is asked for its perf map
 * again and its labels read again. */
struct agent_process *agent_processes_of_profile(struct agent_processes *processes,
						 const struct process_profile *profile,
						 unsigned long period);

/* Reads again the labels of the processes younger than a second not found
 * in the runtime's state yet (a container's process before it entered the
 * container's cgroup or root). Returns whether some are still unsettled. */
bool agent_processes_settle_labels(struct agent_processes *processes);

/* Whether `selection` takes the process that has `pid` now (or had it
 * last), seen sampled in period number `period`: decided from its labels
 * when first asked, and again once they changed (they settled, or it
 * exec'd). The first process the selection leaves out only for labels
 * read from its container's files is said on stderr, once. */
bool agent_processes_selected(struct agent_processes *processes, pid_t pid, unsigned long period,
			      const struct agent_selection *selection);

/* Chooses how the JIT code of each .NET process seen that `selection`
 * takes is named, once in its life and once it has run a second (its
 * runtime loaded), as `names` says: by switching on its perf map and
 * jitdump through its diagnostics IPC (perfmap; auto where the IPC
 * answers), its runtime's memory naming what they leave unnamed (auto),
 * or from its runtime's memory alone (memory; auto where the IPC does not
 * answer). A perf map switched on: the runtime then writes every method
 * it has prepared so far, so the period just sampled is named too; `resolver` reads that map from
 * its start. Its runtime events are recorded from then on by `sessions`
 * (NULL: none). Turns off those it turned on in a process the selection
 * now leaves out (its labels changed), and no longer reads its memory. */
void agent_processes_ask_runtimes(struct agent_processes *processes, struct resolver *resolver,
				  const struct agent_selection *selection,
				  struct agent_runtime_sessions *sessions, FILE *log);

/* The cache of the runtime's code of the process that has `pid` now, when
 * its JIT code is named from its memory; else NULL. */
struct runtime_code_cache *agent_processes_memory_code(const struct agent_processes *processes,
						       pid_t pid);

/* Once period number `period` is sent: drops the processes last seen in
 * it or before that exited (or whose pid another took), and what
 * `resolver` kept of them, and the exited from the perf maps turned on. */
void agent_processes_prune(struct agent_processes *processes, unsigned long period,
			   struct resolver *resolver);

void agent_processes_release(struct agent_processes *processes);

#endif
