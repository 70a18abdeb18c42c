/* The unwind info of each piece of JIT code (jit_prolog.h), by where and
 * when the code appeared: the start and time of its code range
 * (code_ranges.h), so that code jitted later at a reused address gets its
 * own. */
#ifndef PROFCPU_JIT_FRAMES_H
#define PROFCPU_JIT_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jit_frames;

struct jit_frames *jit_frames_new(void);
void jit_frames_free(struct jit_frames *frames);

/* Keeps `size` bytes of unwind info (at most JIT_PROLOG_MAX_INFO) for the
 * code that appeared at `start` at `time`, replacing an earlier one of the
 * same start and time. False when memory runs out. */
bool jit_frames_add(struct jit_frames *frames, uint64_t start, uint64_t time, const uint8_t *info,
		    size_t size);

/* The unwind info kept for that code, valid until the next add; NULL when
 * none was. */
const uint8_t *jit_frames_find(const struct jit_frames *frames, uint64_t start, uint64_t time,
			       size_t *size);

#endif
