/* The agent's worker: one child process for the agent's life, which reads
 * each finished period and sends its profiles (agent_send.h) while the
 * agent samples on. Kept alive, it keeps what names frames from period to
 * period; a child, a crash on a hostile file of some process cannot take
 * the sampler down: the agent starts another worker, which drops the
 * period the dead one was reading and takes the others from the spool.
 *
 * The worker turns on the perf maps of the .NET processes it names, and
 * off again at its end (agent_processes.h): the sampler's stop closes the
 * pipe, and so does its death, even by SIGKILL.
 *
 * The sampler tells the worker through a pipe, without ever waiting on
 * it: each finished period, and the first sample of each process in a
 * period (the worker reads its labels then, while it runs). */
#ifndef PROFCPU_AGENT_WORKER_H
#define PROFCPU_AGENT_WORKER_H

#include "agent_send.h"
#include "id_map.h"

#include <stdint.h>
#include <sys/types.h>

struct agent_worker {
	const struct agent_send_options *options;
	pid_t pid; /* 0: none running */
	int pipe_fd;
	unsigned starts;
	struct id_map noted; /* the processes told of in this period */
};

/* Starts the worker; `current` is the folder being sampled. Returns 0, or
 * -1 after saying why. */
int agent_worker_start(struct agent_worker *worker, const struct agent_send_options *options,
		       const char *current);

/* A sample of `pid` was written: the worker hears of each process once a
 * period. */
void agent_worker_note_sample(struct agent_worker *worker, uint32_t pid);

/* The period in `finished` is done, `current` is sampled now: the worker
 * gets `finished`, or a new worker all periods waiting if the last one died. */
void agent_worker_period_done(struct agent_worker *worker, const char *finished,
			      const char *current);

/* At the end: the worker sends what waits, says what stays, and exits. */
void agent_worker_finish(struct agent_worker *worker);

#endif
