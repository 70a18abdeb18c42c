/* Walking a sampled user stack from its leaf to the thread's start.
 *
 * A sample carries the user registers, a copy of the top of the user stack
 * and, in hybrid mode, the kernel's frame-pointer callchain. The walk takes
 * one frame at a time with whatever the code at the frame's address offers:
 *
 *   - an ELF file's call frame information (.eh_frame, .debug_frame), read
 *     by call_frame_info_step();
 *   - in hybrid mode, the unwind data of precompiled .NET code (ReadyToRun
 *     images' Windows x64 UNWIND_INFO or arm64 .xdata), read by
 *     windows_unwind_step(), and on x86-64 the same made from the prologs
 *     of JIT code (jit_prolog.h) for the frames of callers;
 *   - in hybrid mode, frame pointers (rbp chains, arm64's x29 frame
 *     records) through code without either: JIT code, which keeps such
 *     frames (.NET, node); an arm64 leaf that has not saved lr returns to
 *     lr;
 *   - in hybrid mode, the kernel's callchain once the copy ends: where the
 *     walk's last address appears in the callchain, the callchain's frames
 *     above it follow.
 *
 * In DWARF mode the walk stops at the first frame without CFI, as perf's
 * --call-graph dwarf does. Everything read is untrusted: the walk stops at
 * an address outside mapped code, a stack pointer that does not grow, or
 * memory outside the copy, and is bounded by the caller's frame array.
 * Return addresses lose their pointer-authentication bits (arm64). */
#ifndef PROFCPU_STACK_WALK_H
#define PROFCPU_STACK_WALK_H

#include "call_frame_info.h"
#include "windows_unwind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum code_kind {
	CODE_UNMAPPED,	  /* no executable mapping holds the address */
	CODE_WITH_CFI,	  /* an ELF file with call frame information */
	CODE_PRECOMPILED, /* a .NET ReadyToRun image's code, with its unwind info */
	CODE_WITHOUT_CFI, /* a mapped file without either */
	CODE_GENERATED,	  /* anonymous or memfd memory: JIT code */
};

/* What is at one address of the process. */
struct code_at {
	enum code_kind kind;
	struct call_frame_info *cfi; /* CODE_WITH_CFI: owned by the lookup's cache */
	uint64_t file_address;	     /* CODE_WITH_CFI: the address in the file's terms */
	/* CODE_PRECOMPILED, and CODE_GENERATED whose prolog is known (info NULL
	   otherwise): owned by the lookup's cache */
	struct windows_unwind_code_at unwind;
	/* A later lookup may know more of this code (a file whose CFI may come
	 * with its debug file, JIT code whose prolog may come with a jitdump):
	 * stack_walk_needed_size() then keeps what its walk did not read. */
	bool provisional;
};

/* Fills `code` for `address` of the sampled process. */
typedef void (*code_lookup)(void *context, uint64_t address, struct code_at *code);

enum stack_walk_mode { STACK_WALK_DWARF, STACK_WALK_HYBRID };

struct stack_walk_sample {
	struct frame_registers registers; /* the user registers when sampled */
	struct stack_copy stack;	  /* from registers.sp up */
	/* Hybrid: the kernel's frame-pointer walk of user space, leaf first. */
	const uint64_t *kernel_chain;
	size_t kernel_chain_length;
};

/* How a walk ended. */
struct stack_walk_end {
	/* The last frame is the outermost, as its CFI says (_start,
	 * start_thread, clone3: stripped binaries' too). */
	bool whole;
	/* The address of the frame whose CFI rules the walk could not follow
	 * (a slot past the copy, a register no rule kept, an operation not
	 * followed), or 0. Such a frame gets no caller but the kernel's
	 * callchain, and only where it joins the walk. */
	uint64_t unfollowed;
};

/* Walks `sample`'s user stack into `frames`, leaf first (the sampled
 * instruction pointer, then return addresses). Returns how many frames it
 * found, at least 1 when max_frames is, and how it ended in `end`. */
size_t stack_walk(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
		  code_lookup lookup, void *context, uint64_t *frames, size_t max_frames,
		  struct stack_walk_end *end);

/* The most frames stack_walk_needed_size() walks: a walk that fills them
 * may have more, and keeps its whole copy. */
#define STACK_WALK_MAX_FRAMES 512

/* The frames stack_walk_needed_size()'s walk found, leaf first, as
 * stack_walk() gives them. `certain` when every later walk of the copy
 * finds the same: in hybrid mode, the walk reached the outermost frame or
 * joined the kernel's callchain, met no provisional code, and every address
 * it asked about lay in code the lookup knows (an address it does not may
 * lie in a mapping whose record comes later). A collector may then write
 * these frames in place of the copy. */
struct walked_stack {
	uint64_t frames[STACK_WALK_MAX_FRAMES];
	size_t count;
	bool certain;
};

/* How many bytes of `sample`'s stack copy, from its start, the walk of
 * stack_walk() needs to find the same frames: so a collector may keep no
 * more. When the walk reached the outermost frame, the bytes it read: a
 * later walk that knows more of the code reads elsewhere below that frame,
 * never above it. In hybrid mode, when the walk met no provisional code,
 * the shortest copy that ends at one of the first frames of the rbp chain
 * and joins the kernel's callchain there with the same frames (tried, not
 * guessed), if shorter. Otherwise the whole copy: a walk that stopped early
 * may go on with what a later replay knows (a mapping whose record came
 * late), and would need the rest.
 *
 * `reads` gets the slots the walks read: a copy of the same size with the
 * same values there, the same registers, callchain and code gets the same
 * answer. `exact` tells whether a later walk reads only those slots of the
 * bytes kept, so that the others may be cleared. `walked` gets the walk's
 * frames. */
size_t stack_walk_needed_size(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
			      code_lookup lookup, void *context, struct stack_reads *reads,
			      bool *exact, struct walked_stack *walked);

/* Whether the frame at `address` (a return address, or the leaf's
 * instruction pointer) is a thread's outermost, as its CFI says: where a
 * walk written down before (a collector's, without its stack copy) ends
 * when it reached the thread's start. */
bool stack_walk_is_outermost(enum frame_machine machine, uint64_t address, bool leaf,
			     code_lookup lookup, void *context);

/* The frame-pointer mode's leaf repair: the return address of the leaf at
 * `leaf`, from its CFI and `stack`, a copy of `size` bytes from the stack
 * pointer up, when it points into mapped code. No register is needed when
 * the CFI finds the frame from the stack pointer (the copy starts there). */
bool stack_walk_leaf_caller(uint64_t leaf, const uint8_t *stack, size_t size, code_lookup lookup,
			    void *context, uint64_t *caller);

/* The frame-pointer mode's repair of .NET's on-stack replacement: the
 * caller of the Tier0 frame below the OSR code of the leaf at `leaf`, which
 * the kernel's frame-pointer callchain skips (it goes from the Tier0 frame,
 * returned to at `tier0_return`, to the caller's caller: jit_prolog.h).
 * Both frames are unwound by their prologs from the stack pointer, in
 * `stack`, a copy of `size` bytes from it up; the first must return to
 * `tier0_return`. False when the leaf is no OSR code or the frames are not
 * found so. */
bool stack_walk_osr_leaf_caller(uint64_t leaf, uint64_t tier0_return, const uint8_t *stack,
				size_t size, code_lookup lookup, void *context, uint64_t *caller);

#endif
