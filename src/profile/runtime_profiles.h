/* The .NET runtime's events with stacks (runtime_stacks.h) as profiles of
 * their own, read by the same outputs as the CPU samples' profile: lock
 * contention and waits on wait handles (each wait's nanoseconds on the
 * stack that waited), exceptions (each throw counted on its stack) and
 * allocations (the bytes of each allocation tick or sample on its
 * stack). Their frames are named by the resolver that named the samples',
 * so JIT, ReadyToRun and rundown names are the same; the type thrown or
 * allocated is a frame of its own at the leaf, as PerfView shows it. */
#ifndef PROFCPU_RUNTIME_PROFILES_H
#define PROFCPU_RUNTIME_PROFILES_H

#include "profile.h"
#include "resolver.h"
#include "runtime_stacks.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct runtime_profile {
	/* One sample per event: its period the event's weight (nanoseconds
	 * waited, 1, bytes), its time the event's. */
	struct profile profile;
	uint64_t *counts;	 /* by sample: 1, or the objects an allocation tick stands for */
	uint64_t *lock_owners;	 /* by sample: the OS thread id of the lock's holder
				  * (contention; 0: not named), else NULL */
	uint64_t unnamed_weight; /* of samples with no named frame (the type's aside) */
};

/* The module of the leaf frames that name a type. */
#define RUNTIME_PROFILE_TYPE_MODULE "[type]"

/* Names the stacks of `stacks`, events of the process `pid`, with
 * `resolver`, which has replayed the capture (it knows the process's
 * mappings), each at its event's time; `samples` (the CPU samples' profile,
 * or NULL) gives the threads and the process their names. Fills
 * profiles[kind] for every kind (release them all). */
void runtime_profiles_build(const struct runtime_stacks *stacks, struct resolver *resolver,
			    pid_t pid, const struct profile *samples,
			    struct runtime_profile profiles[RUNTIME_STACK_KINDS]);

/* Where each profile's weight is, for the terminal and the log: the top
 * places (the type, and the first named frame that is not the runtime's
 * locking code), and how much is under no named frame. Prints nothing for
 * a profile without events. */
void runtime_profiles_print(const struct runtime_profile profiles[RUNTIME_STACK_KINDS], FILE *out);

void runtime_profiles_release(struct runtime_profile profiles[RUNTIME_STACK_KINDS]);

#endif
