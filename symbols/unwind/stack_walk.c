#include "stack_walk.h"

#include <string.h>

/* The caller of the frame in `registers` from the frame-pointer chain: the
 * frame pointer points at the saved frame pointer, with the return address
 * above it (x86-64's rbp frames, arm64's x29 frame records). On x86-64 the
 * caller's stack pointer lies right above them; on arm64 the record may sit
 * anywhere in the frame, so that is only the lowest it can be. */
static enum frame_step frame_pointer_step(const struct stack_copy *stack,
					  struct frame_registers *registers)
{
	uint64_t saved_bp, return_address;

	if (!registers->bp_known || registers->bp < registers->sp ||
	    !stack_copy_read(stack, registers->bp, &saved_bp) ||
	    !stack_copy_read(stack, registers->bp + 8, &return_address))
		return FRAME_STEP_FAILED;
	registers->sp = registers->bp + 16;
	registers->ip = frame_return_address(registers->machine, return_address);
	registers->bp = saved_bp;
	registers->lr_known = false;
	return FRAME_STEP_DONE;
}

static bool is_code(code_lookup lookup, void *context, uint64_t return_address)
{
	struct code_at code;

	if (return_address == 0)
		return false;
	lookup(context, return_address - 1, &code);
	return code.kind != CODE_UNMAPPED;
}

/* An x86-64 leaf without unwind data (JIT code) that keeps no frame: small
 * optimized methods, any method before its prologue's "mov rbp, rsp" or
 * after its epilogue's "pop rbp". rbp is still the caller's, and the frame
 * pointer step would give the caller's caller, skipping the caller. Seen
 * from the stack pointer:
 *   - [sp] is an address in code other than the frame pointer's return
 *     address: the leaf's return address (nothing pushed, or all popped);
 *   - [sp] equals rbp and [sp + 8] is in code: rbp was just pushed.
 * A method that has set up its frame holds a stack address or a local at
 * [sp], and its rbp lies at or above sp, so neither applies. */
static enum frame_step x86_64_frameless_leaf_step(const struct stack_copy *stack,
						  code_lookup lookup, void *context,
						  struct frame_registers *registers)
{
	uint64_t at_sp, above, framed_return_address;

	if (!stack_copy_read(stack, registers->sp, &at_sp))
		return FRAME_STEP_FAILED;
	if (registers->bp_known && at_sp == registers->bp &&
	    stack_copy_read(stack, registers->sp + 8, &above) && is_code(lookup, context, above)) {
		registers->ip = above;
		registers->sp += 16;
		return FRAME_STEP_DONE;
	}
	if (!is_code(lookup, context, at_sp))
		return FRAME_STEP_FAILED;
	if (registers->bp_known && registers->bp >= registers->sp &&
	    stack_copy_read(stack, registers->bp + 8, &framed_return_address) &&
	    framed_return_address == at_sp)
		return FRAME_STEP_FAILED;
	registers->ip = at_sp;
	registers->sp += 8;
	return FRAME_STEP_DONE;
}

/* An arm64 leaf without unwind data (JIT code) that has not saved lr: any
 * method before its prolog's "stp x29, lr, [sp, #-N]!", after its epilog's
 * "ldp", or a leaf that never calls. lr holds its return address and x29
 * its caller's frame record, whose return address the frame pointer step
 * would give, skipping the caller. A method that has saved its frame record
 * has x29 pointing at it, with lr's value above; one that has called since
 * holds a return address into itself in lr (taken for its caller: a known
 * limit). */
static enum frame_step aarch64_frameless_leaf_step(const struct stack_copy *stack,
						   code_lookup lookup, void *context,
						   struct frame_registers *registers)
{
	uint64_t framed_return_address, lr;

	if (!registers->lr_known)
		return FRAME_STEP_FAILED;
	lr = frame_return_address(FRAME_MACHINE_AARCH64, registers->lr);
	if (!is_code(lookup, context, lr) ||
	    (registers->bp_known && registers->bp >= registers->sp &&
	     stack_copy_read(stack, registers->bp + 8, &framed_return_address) &&
	     frame_return_address(FRAME_MACHINE_AARCH64, framed_return_address) == lr))
		return FRAME_STEP_FAILED;
	registers->ip = lr;
	registers->lr_known = false;
	return FRAME_STEP_DONE;
}

static enum frame_step frameless_leaf_step(const struct stack_copy *stack, code_lookup lookup,
					   void *context, struct frame_registers *registers)
{
	if (registers->machine == FRAME_MACHINE_AARCH64)
		return aarch64_frameless_leaf_step(stack, lookup, context, registers);
	return x86_64_frameless_leaf_step(stack, lookup, context, registers);
}

/* A step of code without CFI (hybrid only): the unwind info of .NET's
 * code, a frameless JIT leaf, frame pointers. `below_osr`: the frame is
 * the Tier0 one below .NET's on-stack replacement code, which took its
 * frame pointer over (jit_prolog.h): its unwind info is followed from the
 * stack pointer. */
static enum frame_step step_without_cfi(const struct stack_walk_sample *sample, code_lookup lookup,
					void *context, const struct code_at *code, bool below_osr,
					struct frame_registers *registers)
{
	bool leaf = registers->interrupted;
	struct windows_unwind_code_at unwind = code->unwind;

	unwind.frame_at_stack_pointer = below_osr;
	/* Code whose unwind info cannot be followed (a slot past the copy, an
	 * unusual code) is still walked by its frame pointers. A JIT leaf
	 * needs its code as well as its prolog: without it the step cannot
	 * tell an epilog, where part of the frame is gone. */
	if ((code->kind == CODE_PRECOMPILED ||
	     (code->kind == CODE_GENERATED && (!leaf || code->unwind.code))) &&
	    (code->unwind.info || code->unwind.packed) &&
	    windows_unwind_step(&unwind, leaf, &sample->stack, registers) == FRAME_STEP_DONE)
		return FRAME_STEP_DONE;
	if (leaf &&
	    frameless_leaf_step(&sample->stack, lookup, context, registers) == FRAME_STEP_DONE)
		return FRAME_STEP_DONE;
	return frame_pointer_step(&sample->stack, registers);
}

/* One frame's step, by its CFI when it has some (`by_cfi`). `osr` tells
 * whether the frame stepped was .NET's on-stack replacement code, and so
 * whether the next one is its Tier0 frame. */
static enum frame_step step(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
			    code_lookup lookup, void *context, struct frame_registers *registers,
			    bool *by_cfi, bool *osr)
{
	bool below_osr = *osr;

	struct code_at code;
	enum frame_step result;

	/* A return address may lie past its function's end (a call to a
	 * function that never returns): the rules of the call apply. */
	lookup(context, registers->interrupted ? registers->ip : registers->ip - 1, &code);
	*by_cfi = false;
	*osr = false;
	if (code.kind == CODE_WITH_CFI) {
		result =
		    call_frame_info_step(code.cfi, code.file_address, &sample->stack, registers);
		*by_cfi = result != FRAME_STEP_NO_RULE;
		if (*by_cfi)
			return result;
	}
	if (mode != STACK_WALK_HYBRID || code.kind == CODE_UNMAPPED)
		return FRAME_STEP_NO_RULE;
	/* Such a step knows only the instruction, stack and frame pointers
	 * (and lr): the caller's other registers are unknown, and a CFI rule
	 * above that needs one stops the walk rather than guess. */
	result = step_without_cfi(sample, lookup, context, &code, below_osr, registers);
	if (result == FRAME_STEP_DONE) {
		*osr = code.kind == CODE_GENERATED && code.unwind.info && code.unwind.osr;
		if (registers->general)
			registers->general->known = 0;
		registers->interrupted = false;
	}
	return result;
}

/* Goes on with the kernel's callchain above the walk's last frame, whose
 * stack pointer is `last_sp`, and tells whether it found where. The kernel
 * read callchain[k] at rbp + 8 of the rbp chain that starts at the sample's
 * rbp; where that chain lies in the copy, an entry joins the walk when it
 * was read from the very slot of the walk's last return address (an address
 * alone is ambiguous in a recursion). Beyond the copy, the entry holding
 * the walk's last address joins it. A walk that found only the leaf takes
 * the callchain as it is. */
static size_t join_kernel_chain(const struct stack_walk_sample *sample, uint64_t last_sp,
				uint64_t *frames, size_t count, size_t max_frames, bool *joined)
{
	const uint64_t *chain = sample->kernel_chain;
	size_t length = sample->kernel_chain_length, next = 1;
	uint64_t bp = sample->registers.bp, slot_value;
	bool in_copy = sample->registers.bp_known;

	*joined = count == 1 && length > 0;
	for (size_t k = 1; k < length && count > 1 && !*joined; k++) {
		in_copy = in_copy && stack_copy_read(&sample->stack, bp + 8, &slot_value) &&
			  slot_value == chain[k];
		if (in_copy) {
			*joined = bp + 16 == last_sp;
			in_copy = stack_copy_read(&sample->stack, bp, &bp);
		} else
			*joined = chain[k] == frames[count - 1];
		next = k + 1;
	}
	while (*joined && next < length && count < max_frames)
		frames[count++] = chain[next++];
	return count;
}

/* The walk asks about each caller's address twice in a row: whether the
 * return address is code (is_code(), ip - 1), then how to unwind it
 * (step(), ip - 1 again). The second answer is the first: nothing came
 * between them that could change what the lookup knows. */
struct last_lookup {
	code_lookup lookup;
	void *context;
	bool known;
	uint64_t address;
	struct code_at code;
};

static void look_up_again(void *context, uint64_t address, struct code_at *code)
{
	struct last_lookup *last = context;

	if (!last->known || last->address != address) {
		last->lookup(last->context, address, &last->code);
		last->address = address;
		last->known = true;
	}
	*code = last->code;
}

/* How a walk ended: at the thread's outermost frame, where it joined the
 * kernel's callchain, or lost (its last frame's caller not found). */
enum walk_end { WALK_LOST, WALK_OUTERMOST, WALK_JOINED };

static size_t walk(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
		   code_lookup original_lookup, void *original_context, uint64_t *frames,
		   size_t max_frames, enum walk_end *end, uint64_t *unfollowed)
{
	struct last_lookup last = {.lookup = original_lookup, .context = original_context};
	code_lookup lookup = look_up_again;
	void *context = &last;
	struct frame_registers registers = sample->registers;
	struct general_registers general; /* the walk's, which its steps change */
	uint64_t last_sp = registers.sp;  /* of frames[count - 1] */
	size_t count = 0;
	bool joined, by_cfi = false, osr = false;

	*end = WALK_LOST;
	*unfollowed = 0;
	if (max_frames == 0)
		return 0;
	if (registers.general) {
		general = *registers.general;
		registers.general = &general;
	}
	registers.interrupted = true;
	frames[count++] = registers.ip;
	while (count < max_frames) {
		uint64_t previous_sp = registers.sp, ip = registers.ip;
		bool was_interrupted = registers.interrupted;
		enum frame_step result =
		    step(mode, sample, lookup, context, &registers, &by_cfi, &osr);

		if (result == FRAME_STEP_OUTERMOST) {
			*end = WALK_OUTERMOST;
			return count;
		}
		if (result == FRAME_STEP_FAILED && by_cfi)
			*unfollowed = ip;
		/* A walk that does not climb the stack, or leaves the code, is
		 * lost; ip 0 ends a frame-pointer chain at the thread's start.
		 * An arm64 leaf returns through lr, keeping its stack pointer. */
		if (result != FRAME_STEP_DONE || registers.ip == 0 || registers.sp < previous_sp ||
		    (registers.sp == previous_sp && !was_interrupted) ||
		    !is_code(lookup, context, registers.ip))
			break;
		frames[count++] = registers.ip;
		last_sp = registers.sp;
	}
	/* A leaf whose CFI could not be followed has no caller the kernel's
	 * frame pointers can be trusted for: such code may use rbp as any
	 * register (OpenSSL's). */
	if (mode == STACK_WALK_HYBRID && registers.ip != 0 && !(count == 1 && *unfollowed)) {
		count = join_kernel_chain(sample, last_sp, frames, count, max_frames, &joined);
		if (joined)
			*end = WALK_JOINED;
	}
	return count;
}

size_t stack_walk(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
		  code_lookup lookup, void *context, uint64_t *frames, size_t max_frames,
		  struct stack_walk_end *outcome)
{
	enum walk_end end;
	size_t count =
	    walk(mode, sample, lookup, context, frames, max_frames, &end, &outcome->unfollowed);

	outcome->whole = end == WALK_OUTERMOST;
	return count;
}

/* The rbp chain's frames tried as the end of a shorter copy. */
#define JOIN_CANDIDATES 3

/* The shortest copy that ends at the rbp chain's frame `candidate` (0 the
 * sample's rbp, 1 the one saved there, ...) and walks to `frames`, or 0. */
static size_t joining_size(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
			   code_lookup lookup, void *context, const uint64_t *frames, size_t count,
			   size_t read_end)
{
	struct stack_walk_sample shorter = *sample;
	uint64_t tried[STACK_WALK_MAX_FRAMES], bp = sample->registers.bp;
	const uint64_t start = sample->stack.start;
	struct stack_walk_end end;

	for (int candidate = 0; candidate < JOIN_CANDIDATES && sample->registers.bp_known;
	     candidate++) {
		/* The copy must hold the frame's saved rbp and return address,
		 * where the join finds the callchain's entry. */
		if (bp < start || bp - start > sample->stack.size - 16 ||
		    bp - start + 16 >= read_end)
			return 0;
		shorter.stack.size = (size_t)(bp - start) + 16;
		if (stack_walk(mode, &shorter, lookup, context, tried, STACK_WALK_MAX_FRAMES,
			       &end) == count &&
		    !memcmp(tried, frames, count * sizeof(*frames)))
			return shorter.stack.size;
		if (!stack_copy_read(&sample->stack, bp, &bp))
			return 0;
	}
	return 0;
}

/* A lookup that notes whether the walk met provisional code (JIT code
 * whose prolog a later lookup knows may hold a frameless caller the frame
 * pointers skip), or an address outside the code it knows (which a later
 * lookup may find in a mapping whose record came late). */
struct watched_lookup {
	code_lookup lookup;
	void *context;
	const struct stack_copy *stack;
	bool met_provisional, met_unmapped;
};

/* Linux maps nothing below vm.mmap_min_addr (64 KiB unless an
 * administrator lowers it). */
#define LOWEST_MAPPED_ADDRESS 0x10000

/* Whether `address`, asked about as a return address's call (one below
 * it), can be in no mapping: a small number, or a value pointing into the
 * stack memory the copy came from (a frameless leaf's check asks about its
 * locals), which the kernel read as one stack. */
static bool never_code(const struct stack_copy *stack, uint64_t address)
{
	uint64_t value = address + 1;

	return value < LOWEST_MAPPED_ADDRESS ||
	       (value >= stack->start && value - stack->start < stack->size);
}

static void watch_lookup(void *context, uint64_t address, struct code_at *code)
{
	struct watched_lookup *watched = context;

	watched->lookup(watched->context, address, code);
	watched->met_provisional |= code->provisional;
	watched->met_unmapped |=
	    code->kind == CODE_UNMAPPED && !never_code(watched->stack, address);
}

size_t stack_walk_needed_size(enum stack_walk_mode mode, const struct stack_walk_sample *sample,
			      code_lookup lookup, void *context, struct stack_reads *reads,
			      bool *exact, struct walked_stack *walked)
{
	struct stack_walk_sample traced = *sample;
	struct watched_lookup watched = {lookup, context, &sample->stack, false, false};
	uint64_t *frames = walked->frames;
	size_t count, joining, read_end;
	enum walk_end end;
	uint64_t unfollowed;

	*reads = (struct stack_reads){0};
	*exact = false;
	walked->count = 0;
	walked->certain = false;
	if (sample->stack.size < 16)
		return sample->stack.size;
	traced.stack.reads = reads;
	count = walk(mode, &traced, watch_lookup, &watched, frames, STACK_WALK_MAX_FRAMES, &end,
		     &unfollowed);
	if (count == STACK_WALK_MAX_FRAMES)
		return sample->stack.size;
	walked->count = count;
	walked->certain = mode == STACK_WALK_HYBRID && end != WALK_LOST &&
			  !watched.met_provisional && !watched.met_unmapped;
	/* A walk that knows more may read other slots below the outermost
	 * frame, never above it; and may not join where this one did. */
	*exact = !watched.met_provisional;
	/* The shorter copies tried read less, but not always the same. */
	read_end = reads->end;
	if (mode == STACK_WALK_HYBRID && *exact && sample->kernel_chain_length &&
	    (joining = joining_size(mode, &traced, lookup, context, frames, count, read_end)))
		return joining;
	if (end != WALK_OUTERMOST)
		*exact = false;
	return end == WALK_OUTERMOST ? read_end : sample->stack.size;
}

bool stack_walk_leaf_caller(uint64_t leaf, const uint8_t *stack, size_t size, code_lookup lookup,
			    void *context, uint64_t *caller)
{
	struct stack_walk_sample sample = {
	    .registers = {.ip = leaf},
	    .stack = {.start = 0, .bytes = stack, .size = size},
	};
	uint64_t frames[2];
	struct stack_walk_end end;

	if (stack_walk(STACK_WALK_DWARF, &sample, lookup, context, frames, 2, &end) < 2)
		return false;
	*caller = frames[1];
	return true;
}

bool stack_walk_osr_leaf_caller(uint64_t leaf, uint64_t tier0_return, const uint8_t *stack,
				size_t size, code_lookup lookup, void *context, uint64_t *caller)
{
	struct frame_registers registers = {.ip = leaf, .machine = FRAME_MACHINE_X86_64};
	const struct stack_copy copy = {.start = 0, .bytes = stack, .size = size};
	struct code_at code;

	/* Both frames from the stack pointer: neither method has a localloc,
	 * and the leaf's rbp is not in the sample. */
	lookup(context, leaf, &code);
	if (code.kind != CODE_GENERATED || !code.unwind.info || !code.unwind.osr)
		return false;
	code.unwind.frame_at_stack_pointer = true;
	if (windows_unwind_step(&code.unwind, true, &copy, &registers) != FRAME_STEP_DONE ||
	    registers.ip != tier0_return)
		return false;
	lookup(context, tier0_return - 1, &code);
	if (code.kind != CODE_GENERATED || !code.unwind.info)
		return false;
	code.unwind.frame_at_stack_pointer = true;
	if (windows_unwind_step(&code.unwind, false, &copy, &registers) != FRAME_STEP_DONE ||
	    !is_code(lookup, context, registers.ip))
		return false;
	*caller = registers.ip;
	return true;
}

bool stack_walk_is_outermost(enum frame_machine machine, uint64_t address, bool leaf,
			     code_lookup lookup, void *context)
{
	/* The rules that say a frame has no caller need no slot of the stack,
	 * and no register's value. */
	struct frame_registers registers = {.ip = address, .bp_known = true, .machine = machine};
	struct stack_copy empty = {0};
	struct code_at code;

	lookup(context, leaf ? address : address - 1, &code);
	return code.kind == CODE_WITH_CFI &&
	       call_frame_info_step(code.cfi, code.file_address, &empty, &registers) ==
		   FRAME_STEP_OUTERMOST;
}
