/* What the agent's worker (agent_worker.h) does with finished periods, in
 * its own process and over its whole life: names every process's frames
 * with one resolver kept from period to period (each ELF file, .NET image
 * and perf map is read once, not once a period) and, for .NET processes
 * named so, lookups in their runtimes' memory (agent_memory_names.h), turns each period's
 * perf.data into one pprof profile per process with that process's labels
 * (agent_processes.h), and its .NET processes' runtime events into
 * profiles of lock contention, exceptions and allocations with the same
 * labels (agent_runtime_profiles.h), and pushes them to the receivers
 * (Pyroscope's, OpenTelemetry's, or both), oldest first.
 * What a receiver cannot take now waits on disk (agent_spool.h) until that
 * receiver takes it: the other is not held up, nor sent anything twice. */
#ifndef PROFCPU_AGENT_SEND_H
#define PROFCPU_AGENT_SEND_H

#include "agent_memory_names.h"
#include "agent_processes.h"
#include "agent_runtime_sessions.h"
#include "agent_spool.h"
#include "http_client.h"
#include "push_target.h"
#include "resolver.h"
#include "util.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct agent_send_options {
	const struct push_target *target; /* the Pyroscope receiver, as whom; or NULL */
	const struct push_target *otlp;	  /* the OpenTelemetry receiver, or NULL */
	const struct agent_selection *selection;
	const char *spool_dir;
	const char *node;	   /* the node label */
	struct string_list labels; /* --label KEY=VALUE: added to every profile */
	double timeout;		   /* seconds the receiver may stay silent */
	size_t max_periods;	   /* --buffer-periods */
	double period;		   /* seconds, --push-interval */
	/* The runtime events asked of each .NET process, whose profiles are
	 * pushed beside CPU's (--events); NULL: none. */
	const struct eventpipe_config *runtime_events;
	enum jit_names names; /* where .NET processes' JIT code is named (--names) */
};

struct agent_sender {
	const struct agent_send_options *options;
	struct agent_spool spool;
	char *receivers; /* their URLs, for what the spool says (malloc'd) */
	struct agent_processes processes;
	struct agent_memory_names memory_names; /* the resolver's namer */
	struct resolver_config config;
	struct resolver *resolver;	    /* made on the first period */
	FILE *log;			    /* SPOOL/agent.log: what symbols were (not) found */
	bool receiver_down;		    /* said so, not yet that it takes them again */
	struct http_connection *connection; /* to the receiver, kept from push to push */
	bool otlp_down;			    /* said so, as receiver_down */
	struct http_connection *otlp_connection;
	struct agent_runtime_sessions *runtime_sessions; /* NULL: none */
};

/* Takes the periods left in the spool folder but `skip` (the one being
 * sampled); `first`: this is the agent's first worker (says what an
 * earlier run left). */
void agent_sender_open(struct agent_sender *sender, const struct agent_send_options *options,
		       const char *skip, bool first);

/* A sample of `pid` in the period being sampled: its labels are read now,
 * while it runs, the first time. */
void agent_sender_note(struct agent_sender *sender, pid_t pid);

/* Reads again the labels of new processes whose pod was not found yet
 * (agent_processes_settle_labels); whether some are still unsettled. */
bool agent_sender_settle_labels(struct agent_sender *sender);

/* The period in `dir` is finished: it waits for the next round. */
void agent_sender_add(struct agent_sender *sender, const char *dir);

/* Reads every waiting perf.data into profiles and pushes what waits,
 * oldest first, to each receiver until it cannot take one now (then the
 * rest of that receiver's waits on disk for the next round). */
void agent_sender_round(struct agent_sender *sender);

/* Says what was dropped and what stays behind. */
void agent_sender_close(struct agent_sender *sender);

#endif
