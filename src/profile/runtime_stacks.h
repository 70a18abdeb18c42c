/* The .NET runtime's events that carry the managed stack of the thread
 * that sent them (read from its nettrace): lock waits (ContentionStart,
 * with the length its ContentionStop gives and, from .NET 8, the thread
 * that held the lock), waits on wait handles and in
 * Monitor.Wait (WaitHandleWaitStart and Stop, .NET 9 and later), exceptions thrown
 * (ExceptionThrown_V1, with their type) and allocations: ticks
 * (GCAllocationTick, with the bytes allocated since the last one and the
 * type of the object that crossed the mark) or, on .NET 10 where asked,
 * randomized samples (AllocationSampled, each object weighed by the chance
 * it had to be sampled). Their stacks are instruction
 * pointers, leaf first, named later as samples' frames are
 * (runtime_profiles.h). */
#ifndef PROFCPU_RUNTIME_STACKS_H
#define PROFCPU_RUNTIME_STACKS_H

#include "nettrace.h"
#include "string_table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum runtime_stack_kind {
	RUNTIME_STACK_CONTENTION, /* weight: nanoseconds waited */
	RUNTIME_STACK_EXCEPTION,  /* weight: 1 */
	RUNTIME_STACK_ALLOCATION, /* weight: bytes allocated (estimated) */
	RUNTIME_STACK_WAIT,	  /* weight: nanoseconds waited */
	RUNTIME_STACK_KINDS,
};

struct runtime_stack_event {
	enum runtime_stack_kind kind;
	uint64_t time;	    /* CLOCK_MONOTONIC nanoseconds, the samples' clock */
	uint64_t thread_id; /* the OS thread id */
	uint64_t weight;
	uint64_t objects;    /* allocations: about how many objects the bytes are */
	bool sampled;	     /* an AllocationSampled event, not a tick */
	const char *type;    /* exceptions, allocations: the type's name (interned); else NULL */
	uint64_t lock_owner; /* contention: the OS thread id of the lock's holder, 0: not named */
	size_t first_ip, depth; /* into runtime_stacks.ips, leaf first */
};

struct runtime_stacks {
	struct runtime_stack_event *events; /* in the stream's order */
	size_t count, capacity;
	uint64_t *ips;
	size_t ip_count, ip_capacity;
	struct string_table *types; /* owns the types' names */
	/* Every event of each kind and its weight, also those not kept (past
	 * the bounds on what a hostile trace can make this keep); allocations'
	 * weight is only the kept ones'. */
	uint64_t seen[RUNTIME_STACK_KINDS], seen_weight[RUNTIME_STACK_KINDS];
	bool allocations_sampled; /* from AllocationSampled, not ticks */
};

/* Reading the events one at a time, as nettrace_parse() passes them,
 * beside other readers of the same pass: start it on `stacks` (emptied)
 * with the `info` nettrace_parse() fills in, take each event, and finish
 * (freeing the reading). */
struct runtime_stacks_reading;

struct runtime_stacks_reading *runtime_stacks_reading_start(struct runtime_stacks *stacks,
							    const struct nettrace_info *info);

void runtime_stacks_reading_take(struct runtime_stacks_reading *reading,
				 const struct nettrace_event *event);

void runtime_stacks_reading_finish(struct runtime_stacks_reading *reading);

void runtime_stacks_release(struct runtime_stacks *stacks);

#endif
