/* The collector's own walk of each stack copy, to write only the bytes the
 * replay's walk will read (stack_walk_needed_size()): the part above the
 * thread's outermost frame, or above the frame where the kernel's callchain
 * takes over, is never read. That is most of a copy: a shallow thread's
 * copy holds its TLS and whatever lies above, a frame-pointer chain makes
 * the rest of a deep copy redundant. Less to compress, write, decompress and
 * keep in perf.data.
 *
 * The walk follows the capture's side records as the replay does, with the
 * target's files and its jitdump as it grows, but without its perf map or a
 * debug file from a symbol server, which the replay may read; a walk that
 * stops early keeps the whole copy, as the replay may get further. A walk
 * certain to be the replay's stands for the copy (stack_trim_walked()). */
#ifndef PROFCPU_STACK_TRIM_H
#define PROFCPU_STACK_TRIM_H

#include "perf_call_graph.h"
#include "perf_data.h"
#include "target_process.h"

struct borrowed_jitdump;
struct managed_images;
struct native_symbols;
struct stack_trim;

/* NULL when `mode` copies no stacks (fp), or PROFCPU_KEEP_STACK_COPIES is
 * set. `attr`, the sampling event's, lays out the side records' trailers. `images` and `native`,
 * the target's .NET images and ELF files the replay reads too, and `jitdump`, the target's jitdump
 * as its copier parses it, are borrowed (resolver.h); NULL: the walk reads its own. A borrowed
 * `native` must not download. */
struct stack_trim *stack_trim_new(const struct target_process *target,
				  const struct perf_event_attr *attr, enum call_graph_mode mode,
				  struct managed_images *images, struct native_symbols *native,
				  const struct borrowed_jitdump *jitdump);
void stack_trim_free(struct stack_trim *trim);

/* Takes in a side record: a mapping, a fork, an exec. */
void stack_trim_follow(struct stack_trim *trim, const struct perf_event_header *record);

/* How many bytes of `sample`'s stack copy to keep. */
uint64_t stack_trim_needed(struct stack_trim *trim, const struct perf_sample *sample);

/* The user frames of the last sample stack_trim_needed() was asked about,
 * leaf first, when its walk is certain to be the replay's (walked_stack in
 * stack_walk.h) and the side records followed hold no change to its
 * process's code from after the sample: the collector may write them in
 * place of the kernel's user callchain, and no copy. False otherwise. */
bool stack_trim_walked(const struct stack_trim *trim, const uint64_t **frames, size_t *count);

/* The user frames the collector's walk of that sample found, leaf first,
 * certain or not (what the replay's walk may find too). False when it was
 * not walked. */
bool stack_trim_last_walk(const struct stack_trim *trim, const uint64_t **frames, size_t *count);

/* Zeroes the bytes of `copy`, the first `size` bytes kept of the last
 * sample stack_trim_needed() was asked about, that its walk did not read:
 * the leaf's locals (a hash's state, a buffer) cost the most to compress
 * and no unwinder reads them. Leaves the copy as it is when the walk's
 * slots are not known. */
void stack_trim_clear_unread(const struct stack_trim *trim, uint8_t *copy, size_t size);

#endif
