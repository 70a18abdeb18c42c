/* What the stack walk knows of each piece of JIT code: the unwind info its
 * prolog gives (jit_prolog.h) and, for code as short as the part of it kept,
 * the whole code (to tell its epilogs). By where and when the code
 * appeared: the start and time of its code range (code_ranges.h), so that
 * code jitted later at a reused address gets its own.
 *
 * A jitdump holds thousands of methods and a capture's stacks pass through
 * a few hundred: each prolog is kept as it was read (its bytes, packed) and
 * read for unwind info only when a walk first asks for its code. */
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
	bool osr;	  /* on-stack replacement code (jit_prolog.h) */
};

struct jit_frames;

struct jit_frames *jit_frames_new(void);
void jit_frames_free(struct jit_frames *frames);

/* Keeps the first `size` bytes (at most JIT_PROLOG_CODE_BYTES) of the code
 * that appeared at `start` at `time`, `whole` when that is all of it,
 * replacing what was kept for the same start and time. False when memory
 * runs out. */
bool jit_frames_add(struct jit_frames *frames, uint64_t start, uint64_t time, const uint8_t *prolog,
		    size_t size, bool whole);

/* The unwind info of that code's prolog, read the first time it is asked
 * for; valid until jit_frames_free. NULL when nothing was kept for that
 * code or its prolog gives no unwind info. */
const struct jit_frame *jit_frames_find(struct jit_frames *frames, uint64_t start, uint64_t time);

#endif
