/* Reading a live process's memory, which is hostile input: every address
 * and size read from it may be corrupt or planted. Reads go through
 * process_vm_readv (the permission collect already needs: ptrace-read
 * access, CAP_SYS_PTRACE for another user's process), never ptrace stops,
 * so the target runs on undisturbed.
 *
 * Each read is checked whole (a short read fails), limited in size, and
 * charged to a budget of bytes and time for the target: a loop that corrupt
 * pointers send in circles ends when the budget does.
 *
 * The same reads can come from an image of a target's memory instead (a
 * list of regions: the fuzz target's address space, tests' fakes), under
 * the same bounds, so that what reads a process reads bytes alone too. */
#ifndef PROFCPU_TARGET_MEMORY_H
#define PROFCPU_TARGET_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The largest single read: the contract descriptor's JSON is about 10 KiB
 * in .NET 10. */
enum { TARGET_MEMORY_MAX_READ = 1 << 20 };

/* `size` bytes that a target's memory holds at `address`. */
struct target_memory_region {
	uint64_t address;
	const uint8_t *bytes;
	size_t size;
};

struct target_memory {
	pid_t pid;
	/* an image read instead of the process, when not NULL */
	const struct target_memory_region *regions;
	size_t region_count;
	uint64_t bytes_left;  /* of the byte budget */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; reads fail after it */
	uint64_t reads;	      /* made so far, for the log and the tests */
	/* NULL until something stops the reading: "the byte budget", "the time
	 * budget"; it stays set and no more is read. */
	const char *stopped_by;
};

/* A reader of `pid`'s memory that reads at most `max_bytes` in all and
 * stops `max_seconds` from now. */
void target_memory_init(struct target_memory *memory, pid_t pid, uint64_t max_bytes,
			double max_seconds);

/* A reader of an image: `count` regions (not copied: they outlive the
 * reader), which reads at most `max_bytes` in all; a read must lie inside
 * one region. No time budget: nothing in an image waits. */
void target_memory_init_image(struct target_memory *memory,
			      const struct target_memory_region *regions, size_t count,
			      uint64_t max_bytes);

/* Reads `size` bytes (1 to TARGET_MEMORY_MAX_READ) at the target's
 * `address` into `bytes`. False when they are not all readable (unmapped,
 * the process gone), the size is out of bounds, or the budget is spent. */
bool target_memory_read(struct target_memory *memory, uint64_t address, void *bytes, size_t size);

/* A little-endian integer at `address` (this build reads its own
 * architecture's runtimes: the target's byte order is the profiler's). */
bool target_memory_read_u64(struct target_memory *memory, uint64_t address, uint64_t *value);
bool target_memory_read_u32(struct target_memory *memory, uint64_t address, uint32_t *value);

#endif
