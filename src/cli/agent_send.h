/* What a sender of the agent does with finished periods (agent_spool.h),
 * in its own process: names every .NET process's JIT code (its perf map
 * switched on once, through its diagnostics socket), turns each period's
 * perf.data into one pprof profile per process with that process's labels
 * (pod_labels.h), and pushes them to the receiver, oldest first. */
#ifndef PROFCPU_AGENT_SEND_H
#define PROFCPU_AGENT_SEND_H

#include "options.h"

#include <stddef.h>

struct agent_send_options {
	const char *url;
	const char *spool_dir;
	const char *node;	   /* the node label */
	struct string_list labels; /* --label KEY=VALUE: added to every profile */
	double timeout;		   /* seconds the receiver may stay silent */
};

/* The exit status of a sender that stopped at a push the receiver could
 * not take now; its `why` is in SPOOL/AGENT_SEND_WHY_FILE. */
#define AGENT_SEND_RETRY_LATER 75
#define AGENT_SEND_WHY_FILE    "last-push-error"

/* Encodes and pushes `periods` (folders, oldest first). Returns 0 when all
 * were sent (their folders are gone), AGENT_SEND_RETRY_LATER, or 1 when a
 * period could not be read (its folder is gone, the others stay). */
int agent_send_periods(const struct agent_send_options *options, char *const *periods,
		       size_t count);

#endif
