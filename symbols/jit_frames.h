/* What the stack walk knows of each piece of JIT code: the unwind info its
 * prolog gives (jit_prolog.h) and, for code as short as the part of it kept,
 * the whole code (to tell its epilogs). By where and when the code
 * appeared: the start and time of its code range (code_ranges.h), so that
 * code jitted later at a reused address gets its own. */
#ifndef PROFCPU_JIT_FRAMES_H
#define PROFCPU_JIT_FRAMES_H

#include "jit_prolog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jit_frame {
	uint8_t info[JIT_PROLOG_MAX_INFO];
	size_t info_size;
	uint8_t code[JIT_PROLOG_CODE_BYTES];
	size_t code_size; /* 0 for code longer than this */
};

struct jit_frames;

struct jit_frames *jit_frames_new(void);
void jit_frames_free(struct jit_frames *frames);

/* Keeps `frame` for the code that appeared at `start` at `time`, replacing
 * an earlier one of the same start and time. False when memory runs out. */
bool jit_frames_add(struct jit_frames *frames, uint64_t start, uint64_t time,
		    const struct jit_frame *frame);

/* What was kept for that code, valid until the next add; NULL when
 * nothing was. */
const struct jit_frame *jit_frames_find(const struct jit_frames *frames, uint64_t start,
					uint64_t time);

#endif
