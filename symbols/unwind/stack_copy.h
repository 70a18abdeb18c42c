/* A sample's copy of user stack memory, as walks read it: 8 bytes at a
 * time, each read noted where asked, so that a collector knows what a walk's
 * result depends on. */
#ifndef PROFCPU_STACK_COPY_H
#define PROFCPU_STACK_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The slots of a copy that walks read, and the general registers their
 * rules read: how much of the copy they needed, and what their results
 * depend on (besides ip, sp, the frame pointer and lr). */
#define STACK_READS_LISTED 256
struct stack_reads {
	size_t end;   /* of the highest slot read, from the copy's start */
	size_t count; /* slots read; those past STACK_READS_LISTED are not listed */
	uint32_t offsets[STACK_READS_LISTED];
	uint32_t general_registers; /* bit n: frame_registers.general[n] of the sample */
};

/* A copy of user stack memory: `size` bytes that lay at `start`. */
struct stack_copy {
	uint64_t start;
	const uint8_t *bytes;
	size_t size;
	struct stack_reads *reads; /* if not NULL: every read is noted there */
};

/* Reads the 8 bytes at `address` from the copy. False outside it. */
bool stack_copy_read(const struct stack_copy *copy, uint64_t address, uint64_t *value);

#endif
