#include "replay.h"
#include "off_cpu.h"
#include "perf_call_graph.h"
#include "perf_data.h"
#include "perf_record_mapping.h"
#include "perf_user_registers.h"
#include "stack_walk.h"
#include "time_order.h"
#include "util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK_DEPTH 1024

/* What each kept record starts with: the block that holds it, and what it
 * is. */
struct kept_record {
	struct record_block *block;
	bool is_sample;
};

/* A sample decoded once, when it is read, with only what its replay reads:
 * the callchain, the user registers, a tracepoint's raw fields and the part
 * of the stack copy the kernel filled (dyn_size; often half of what the
 * record holds), so a capture in flight takes less memory and less copying. */
struct kept_sample {
	struct kept_record kept;
	struct perf_sample sample; /* its arrays follow it in the same block */
	uint16_t misc;		   /* the record's, for its CPU mode */
};

/* A copy of a side record (COMM, MMAP, ...). */
struct kept_side_record {
	struct kept_record kept;
	_Alignas(8) struct perf_event_header record; /* its body follows */
};

struct thread_name {
	uint32_t tid;
	const char *name;
	uint32_t generation; /* of the process, when tid is its pid (profile.h) */
};

/* Kept records live in large blocks, reused once every record in them is
 * replayed: one malloc per record, or fresh memory for each round, cost
 * more than reading the records (page faults). */
struct record_block {
	struct record_block *next;	/* in the list of every block */
	struct record_block *next_free; /* in the list of blocks to reuse */
	size_t used, live;		/* bytes taken; records not replayed yet */
	_Alignas(8) unsigned char bytes[1 << 20];
};

/* For each location: the newest one made for the same (pid, address), and
 * until when its name holds. JIT code is reused, and a pid is reused or
 * execs another program: an address whose name has changed, or whose
 * process has, gets a new location, and the profile's index keeps finding
 * the first. */
struct location_version {
	uint32_t newest;
	uint64_t valid_until;
};

struct replay {
	struct perf_data_reader *reader;
	struct resolver *resolver;
	struct profile *profile;
	struct time_order waiting; /* kept records not replayed yet */
	size_t record_count;	   /* read so far, malformed ones too */
	struct record_block *blocks, *filling, *free_blocks;
	/* Rounds (PERF_RECORD_FINISHED_ROUND): records up to the latest time of
	 * the round before the last one can be replayed and freed. */
	uint64_t latest_time, replayable_until;
	struct thread_name *threads; /* open addressing by tid; tid 0 is empty */
	size_t thread_slots, thread_count;
	struct location_version *versions; /* by location id */
	size_t version_capacity;
	long switch_event;	/* the index of the event recording switches, or -1 */
	bool switch_tracepoint; /* that event is sched:sched_switch, not context-switches */
	uint64_t time;		/* of the sample being replayed */
	uint32_t generation;	/* of its process (profile.h) */
	uint32_t stack[MAX_STACK_DEPTH];
	uint64_t user_frames[MAX_STACK_DEPTH]; /* a stack walk's addresses */
};

/* `size` bytes (a multiple of 8) for a record to keep, starting with a
 * struct kept_record filled here. */
static void *keep_bytes(struct replay *replay, size_t size, bool is_sample)
{
	struct kept_record *kept;
	struct record_block *block = replay->filling;

	if (!block || sizeof(block->bytes) - block->used < size) {
		if (block && block->live == 0) {
			block->used = 0;
		} else if (replay->free_blocks) {
			block = replay->free_blocks;
			replay->free_blocks = block->next_free;
			block->used = 0;
		} else {
			block = xmalloc(sizeof(*block));
			*block = (struct record_block){.next = replay->blocks};
			replay->blocks = block;
		}
		replay->filling = block;
	}
	kept = (struct kept_record *)(block->bytes + block->used);
	block->used += size;
	block->live++;
	*kept = (struct kept_record){block, is_sample};
	return kept;
}

/* The record `kept` is replayed: its block is reused once empty. */
static void release_kept(struct replay *replay, const struct kept_record *kept)
{
	struct record_block *block = kept->block;

	if (--block->live == 0 && block != replay->filling) {
		block->next_free = replay->free_blocks;
		replay->free_blocks = block;
	}
}

static void free_record_blocks(struct record_block *blocks)
{
	while (blocks) {
		struct record_block *next = blocks->next;

		free(blocks);
		blocks = next;
	}
}

static size_t aligned_size(size_t size)
{
	return (size + 7u) & ~(size_t)7u;
}

static struct kept_record *keep_side_record(struct replay *replay,
					    const struct perf_event_header *record)
{
	struct kept_side_record *kept = keep_bytes(
	    replay, offsetof(struct kept_side_record, record) + aligned_size(record->size), false);

	memcpy(&kept->record, record, record->size);
	return &kept->kept;
}

/* Copies `size` bytes of `array` to `*cursor` and moves it on. */
static const void *copy_array(unsigned char **cursor, const void *array, size_t size)
{
	void *copy = *cursor;

	if (!array)
		return NULL;
	memcpy(copy, array, size);
	*cursor += aligned_size(size);
	return copy;
}

static struct kept_record *keep_sample(struct replay *replay,
				       const struct perf_event_header *record,
				       const struct perf_sample *sample)
{
	size_t callchain_size = sample->callchain_length * sizeof(*sample->callchain);
	size_t registers_size = sample->user_registers
				    ? (size_t)__builtin_popcountll(sample->user_register_mask) *
					  sizeof(*sample->user_registers)
				    : 0;
	struct kept_sample *kept =
	    keep_bytes(replay,
		       sizeof(*kept) + callchain_size + registers_size +
			   aligned_size(sample->user_stack_size) + aligned_size(sample->raw_size),
		       true);
	unsigned char *cursor = (unsigned char *)(kept + 1);

	kept->sample = *sample;
	kept->misc = record->misc;
	kept->sample.callchain = copy_array(&cursor, sample->callchain, callchain_size);
	kept->sample.user_registers = copy_array(&cursor, sample->user_registers, registers_size);
	kept->sample.user_stack = copy_array(&cursor, sample->user_stack, sample->user_stack_size);
	kept->sample.raw = copy_array(&cursor, sample->raw, sample->raw_size);
	return &kept->kept;
}

static void replay_sample(struct replay *replay, const struct kept_sample *kept);
static void replay_side_record(struct replay *replay, const struct perf_event_header *record);

static void replay_kept(void *record, void *context)
{
	struct replay *replay = context;
	const struct kept_record *kept = record;

	if (kept->is_sample)
		replay_sample(replay, (const struct kept_sample *)kept);
	else
		replay_side_record(replay, &((const struct kept_side_record *)kept)->record);
	release_kept(replay, kept);
}

/* perf's rule for rounds (its ordered events): a ring buffer drained in
 * one round holds nothing older than what the rounds before it held last,
 * so at the end of a round everything up to the previous round's latest time
 * is in. Keeps memory to about two rounds of records, not the capture. */
static void finish_round(struct replay *replay)
{
	time_order_take_until(&replay->waiting, replay->replayable_until, replay_kept, replay);
	replay->replayable_until = replay->latest_time;
}

static int keep_record(const struct perf_event_header *record, void *context)
{
	struct replay *replay = context;
	struct perf_sample sample;
	struct kept_record *kept;
	uint64_t time;

	if (record->type == PERF_RECORD_FINISHED_ROUND) {
		finish_round(replay);
		return 0;
	}
	replay->record_count++;
	if (record->type == PERF_RECORD_SAMPLE) {
		/* A malformed sample is dropped here, decoded once. */
		if (!perf_data_reader_parse_sample(replay->reader, record, &sample))
			return 0;
		time = sample.time;
		kept = keep_sample(replay, record, &sample);
	} else {
		if (!perf_data_reader_record_time(replay->reader, record, &time))
			time = 0;
		kept = keep_side_record(replay, record);
	}
	time_order_add(&replay->waiting, time, kept);
	if (time > replay->latest_time)
		replay->latest_time = time;
	return 0;
}

static struct thread_name *thread_slot(struct replay *replay, uint32_t tid)
{
	size_t mask, slot;

	if (replay->thread_count * 2 >= replay->thread_slots) {
		struct thread_name *old = replay->threads;
		size_t old_slots = replay->thread_slots;

		replay->thread_slots = old_slots ? old_slots * 2 : 256;
		replay->threads = xcalloc(replay->thread_slots, sizeof(*replay->threads));
		replay->thread_count = 0;
		for (size_t i = 0; i < old_slots; i++)
			if (old[i].tid)
				*thread_slot(replay, old[i].tid) = old[i];
		free(old);
	}
	mask = replay->thread_slots - 1;
	for (slot = (tid * 2654435761u) & mask; replay->threads[slot].tid; slot = (slot + 1) & mask)
		if (replay->threads[slot].tid == tid)
			return &replay->threads[slot];
	replay->thread_count++;
	replay->threads[slot].tid = tid;
	return &replay->threads[slot];
}

/* Whether the samples and mappings of `pid` are replayed. */
static bool replays_process(const struct profile *profile, uint32_t pid)
{
	if (pid == 0)
		return !profile->without_pid_0;
	/* The kernel's own mappings come with pid -1. */
	return pid == UINT32_MAX || !profile->takes_process ||
	       profile->takes_process(pid, profile->takes_context);
}

static const char *thread_name(struct replay *replay, uint32_t tid)
{
	/* The idle task, pid 0 on every CPU, has no comm record: perf calls
	 * it swapper. */
	const char *name = tid ? thread_slot(replay, tid)->name : "swapper";

	return name ? name : string_table_intern(replay->profile->strings, "[unknown]");
}

static void set_thread_name(struct replay *replay, uint32_t tid, const char *name)
{
	thread_slot(replay, tid)->name = profile_intern_printable(replay->profile, name);
}

/* Which process of `pid` runs now (profile.h). */
static uint32_t generation_of(struct replay *replay, uint32_t pid)
{
	return pid ? thread_slot(replay, pid)->generation : 0;
}

static uint32_t locate(struct replay *replay, uint32_t pid, uint64_t address, bool kernel,
		       bool return_address)
{
	uint32_t first = profile_find_location(replay->profile, pid, address, kernel), id;
	struct resolved_location resolved;

	if (first != PROFILE_NOT_FOUND) {
		id = replay->versions[first].newest;
		if (replay->time < replay->versions[id].valid_until &&
		    replay->profile->locations[id].generation == replay->generation)
			return id;
	}
	resolver_resolve(replay->resolver, (pid_t)pid, address, kernel, return_address, &resolved);
	id = profile_add_location(replay->profile, pid, address, kernel, &resolved);
	replay->profile->locations[id].generation = replay->generation;
	grow_array((void **)&replay->versions, &replay->version_capacity, (size_t)id + 1,
		   sizeof(*replay->versions));
	replay->versions[id] = (struct location_version){id, resolved.valid_until};
	if (first != PROFILE_NOT_FOUND)
		replay->versions[first].newest = id;
	return id;
}

/* The process whose code the stack walk asks about. */
struct code_lookup_context {
	struct resolver *resolver;
	pid_t pid;
};

static void look_up_code(void *context, uint64_t address, struct code_at *code)
{
	struct code_lookup_context *process = context;

	resolver_code_at(process->resolver, process->pid, address, code);
}

/* The caller of the leaf (the first user frame, callchain[leaf]) that the
 * kernel's frame-pointer walk skipped because the leaf keeps no frame
 * pointer: the return address the leaf's call frame information finds in the
 * sample's copy of the stack, unless the callchain already goes on with it.
 * 0 when there is nothing to add. */
static uint64_t skipped_leaf_caller(struct replay *replay, const struct perf_sample *sample,
				    uint64_t leaf)
{
	struct code_lookup_context process = {replay->resolver, (pid_t)sample->pid};
	uint64_t return_address;

	if (!sample->user_stack ||
	    !stack_walk_leaf_caller(sample->callchain[leaf], sample->user_stack,
				    sample->user_stack_size, look_up_code, &process,
				    &return_address))
		return 0;
	if (leaf + 1 < sample->callchain_length && sample->callchain[leaf + 1] == return_address)
		return 0;
	return return_address;
}

/* The caller of the Tier0 frame below the leaf's on-stack replacement code
 * (callchain[leaf]), which the kernel's frame-pointer walk skipped: it
 * goes on with callchain[leaf + 1], the Tier0 frame, and then the
 * caller's caller. 0 when the leaf is no such code, the copy does not hold
 * the frames or the callchain already has the caller. */
static uint64_t skipped_osr_caller(struct replay *replay, const struct perf_sample *sample,
				   uint64_t leaf)
{
	struct code_lookup_context process = {replay->resolver, (pid_t)sample->pid};
	uint64_t caller;

	if (!sample->user_stack || leaf + 1 >= sample->callchain_length ||
	    !stack_walk_osr_leaf_caller(sample->callchain[leaf], sample->callchain[leaf + 1],
					sample->user_stack, sample->user_stack_size, look_up_code,
					&process, &caller))
		return 0;
	if (leaf + 2 < sample->callchain_length && sample->callchain[leaf + 2] == caller)
		return 0;
	return caller;
}

/* Appends the user callchain of a hybrid sample without a stack copy as it
 * is: the collector's walk, written in place of the kernel's callchain when
 * it was certain (docs/UNWINDING.md), or the kernel's own when it could not
 * copy. `whole` tells whether it ends at the thread's outermost frame. */
static size_t add_user_chain(struct replay *replay, const struct perf_sample *sample,
			     const uint64_t *user_chain, size_t user_chain_length, size_t depth,
			     bool *whole)
{
	struct code_lookup_context process = {replay->resolver, (pid_t)sample->pid};
	size_t count = 0;

	for (; count < user_chain_length && depth < MAX_STACK_DEPTH; count++)
		replay->stack[depth++] =
		    locate(replay, sample->pid, user_chain[count], false, count > 0);
	*whole =
	    count > 0 && stack_walk_is_outermost(perf_user_registers_machine, user_chain[count - 1],
						 count == 1, look_up_code, &process);
	return depth;
}

/* Notes a walk stopped at `location`, a frame whose CFI it could not follow. */
static void count_unfollowed(struct profile *profile, uint32_t location)
{
	const char *module = profile->locations[location].module;
	bool added;
	uint32_t id =
	    id_map_get(&profile->unfollowed_modules, (uint64_t)(uintptr_t)module, 0, &added);

	if (added) {
		profile->unfollowed_by_module =
		    xrealloc(profile->unfollowed_by_module,
			     profile->unfollowed_modules.count * sizeof(uint64_t));
		profile->unfollowed_by_module[id] = 0;
	}
	profile->unfollowed_by_module[id]++;
	profile->unfollowed_stacks++;
}

/* Appends the user stack the walk finds (stack_walk.h) from the sample's
 * registers and stack copy, and in hybrid mode the kernel's callchain of
 * user space (`user_chain`), at replay->stack[depth]. Returns the new depth;
 * a sample without user registers (a kernel thread's) adds nothing. `whole`
 * tells whether the walk reached the outermost frame. */
static size_t add_walked_stack(struct replay *replay, const struct perf_sample *sample,
			       enum call_graph_mode mode, const uint64_t *user_chain,
			       size_t user_chain_length, size_t depth, bool *whole)
{
	struct code_lookup_context process = {replay->resolver, (pid_t)sample->pid};
	struct stack_walk_sample walk = {
	    .stack = {.bytes = sample->user_stack, .size = sample->user_stack_size},
	    .kernel_chain = user_chain,
	    .kernel_chain_length = user_chain_length,
	};
	struct general_registers general;
	struct stack_walk_end end;
	size_t count;

	if (mode == CALL_GRAPH_HYBRID && !sample->user_stack && user_chain_length)
		return add_user_chain(replay, sample, user_chain, user_chain_length, depth, whole);
	if (!perf_sample_frame_registers(sample, &walk.registers, &general)) {
		*whole = false;
		return depth;
	}
	walk.stack.start = walk.registers.sp;
	count =
	    stack_walk(mode == CALL_GRAPH_DWARF ? STACK_WALK_DWARF : STACK_WALK_HYBRID, &walk,
		       look_up_code, &process, replay->user_frames, MAX_STACK_DEPTH - depth, &end);
	*whole = end.whole;
	for (size_t i = 0; i < count; i++) {
		replay->stack[depth] =
		    locate(replay, sample->pid, replay->user_frames[i], false, i > 0);
		if (end.unfollowed && replay->user_frames[i] == end.unfollowed) {
			count_unfollowed(replay->profile, replay->stack[depth]);
			end.unfollowed = 0;
		}
		depth++;
	}
	return depth;
}

static bool is_one_of(const char *function, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!strcmp(function, names[i]))
			return true;
	return false;
}

/* Functions that start a thread or a process: a stack that ends in one is
 * whole. In user space libc's; in the kernel, where a kernel thread starts
 * (ret_from_fork, under ret_from_fork_asm since Linux 6.7) and where each
 * CPU's idle task does (common_startup_64 since 6.9, before it
 * secondary_startup_64 and its _no_verify entry, on x86-64). */
static bool is_thread_root(const char *function, bool kernel)
{
	static const char *const user_roots[] = {
	    "start_thread",
	    "__libc_start_call_main",
	    "__libc_start_main",
	    "_start",
	    "clone3",
	    "__clone3",
	    "clone",
	    "__clone",
	};
	static const char *const kernel_roots[] = {
	    "ret_from_fork",
	    "ret_from_fork_asm",
	    "common_startup_64",
	    "secondary_startup_64",
	    "secondary_startup_64_no_verify",
	};

	return kernel
		   ? is_one_of(function, kernel_roots, sizeof(kernel_roots) / sizeof(*kernel_roots))
		   : is_one_of(function, user_roots, sizeof(user_roots) / sizeof(*user_roots));
}

static bool reaches_thread_root(const struct profile *profile, const uint32_t *stack, size_t depth)
{
	const struct profile_location *outermost;

	if (depth == 0)
		return false;
	outermost = &profile->locations[stack[depth - 1]];
	return outermost->frame_count > 0 &&
	       is_thread_root(
		   profile->frames[outermost->first_frame + outermost->frame_count - 1].function,
		   outermost->kernel);
}

static void replay_sample(struct replay *replay, const struct kept_sample *kept)
{
	const struct perf_sample *sample = &kept->sample;
	struct profile_sample added;
	size_t depth = 0, frames = 0;
	bool kernel = (kept->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	bool first_in_context = true;
	enum call_graph_mode mode;
	const uint64_t *user_chain = NULL;
	size_t user_chain_length = 0;
	uint64_t osr_caller = 0; /* fp mode: to add after the leaf's caller */
	bool whole = false;
	struct perf_sched_switch fields;

	if (!replays_process(replay->profile, sample->pid))
		return;
	replay->time = sample->time;
	replay->generation = generation_of(replay, sample->pid);
	resolver_set_time(replay->resolver, sample->time);
	mode = call_graph_of_attr(perf_data_reader_attr(replay->reader, sample->event));
	if (sample->callchain_length == 0 && mode == CALL_GRAPH_FP)
		replay->stack[depth++] = locate(replay, sample->pid, sample->ip, kernel, false);
	for (uint64_t i = 0; i < sample->callchain_length && depth < MAX_STACK_DEPTH; i++) {
		uint64_t address = sample->callchain[i];

		if (address >= PERF_CONTEXT_MAX) {
			kernel = address == PERF_CONTEXT_KERNEL;
			first_in_context = true;
			if (address == PERF_CONTEXT_USER && mode != CALL_GRAPH_FP) {
				/* The walk takes the user frames from here. */
				user_chain = &sample->callchain[i + 1];
				user_chain_length = sample->callchain_length - i - 1;
				frames += user_chain_length;
				break;
			}
			continue;
		}
		frames++;
		if (address == 0)
			continue;
		/* After the first address of a context come return addresses. */
		replay->stack[depth++] =
		    locate(replay, sample->pid, address, kernel, !first_in_context);
		if (!kernel && first_in_context && depth < MAX_STACK_DEPTH) {
			uint64_t caller = skipped_leaf_caller(replay, sample, i);

			if (caller)
				replay->stack[depth++] =
				    locate(replay, sample->pid, caller, false, true);
			else
				osr_caller = skipped_osr_caller(replay, sample, i);
		} else if (osr_caller && depth < MAX_STACK_DEPTH) {
			/* The Tier0 frame's caller comes after the Tier0 frame. */
			replay->stack[depth++] =
			    locate(replay, sample->pid, osr_caller, false, true);
			osr_caller = 0;
		}
		first_in_context = false;
	}
	if (mode != CALL_GRAPH_FP && depth < MAX_STACK_DEPTH)
		depth = add_walked_stack(replay, sample, mode, user_chain, user_chain_length, depth,
					 &whole);
	added = (struct profile_sample){
	    .time = sample->time,
	    .period = sample->period,
	    .pid = sample->pid,
	    .generation = replay->generation,
	    .tid = sample->tid,
	    .cpu = sample->cpu,
	    .stack = profile_intern_stack(replay->profile, replay->stack, depth),
	    .process_name = thread_name(replay, sample->pid),
	    .thread_name = thread_name(replay, sample->tid),
	};
	if ((long)sample->event == replay->switch_event) {
		if (!replay->switch_tracepoint)
			off_cpu_add_context_switch(replay->profile, &added);
		else if (perf_sched_switch_parse(sample->raw, sample->raw_size, &fields))
			off_cpu_add_switch(replay->profile, &added, &fields);
		return;
	}
	/* A walk may reach the root of a stack the kernel's callchain cut. */
	if (whole || reaches_thread_root(replay->profile, replay->stack, depth))
		replay->profile->rooted_stacks++;
	else if (frames >= replay->profile->max_stack_depth)
		replay->profile->cut_stacks++;
	profile_add_sample(replay->profile, &added);
}

/* Follows what a side record changes in a process's code, as the
 * collector's own walks did while recording (stack_trim.c). */
static void follow_code(struct replay *replay, const struct perf_event_header *record)
{
	struct perf_mapping mapping;
	uint32_t pid, parent;

	if (perf_record_mapping(record, &mapping)) {
		if (!replays_process(replay->profile, mapping.pid))
			return;
		resolver_add_mapping(
		    replay->resolver, (pid_t)mapping.pid, mapping.address, mapping.length,
		    mapping.page_offset,
		    &(struct mapped_file){
			.path = mapping.path,
			.identity = {mapping.major, mapping.minor, mapping.inode}});
		return;
	}
	switch (perf_record_process_change(record, &pid, &parent)) {
	case PERF_PROCESS_FORKED: {
		/* The child runs under its parent's name until it execs (the
		 * kernel writes no comm record at a fork): not under the name of
		 * the process that had its pid before. */
		const char *name = thread_slot(replay, parent)->name;

		resolver_fork(replay->resolver, (pid_t)pid, (pid_t)parent);
		id_map_get(&replay->profile->forks, pid, ++thread_slot(replay, pid)->generation,
			   NULL);
		if (name)
			thread_slot(replay, pid)->name = name;
		break;
	}
	case PERF_PROCESS_EXECED:
		resolver_exec(replay->resolver, (pid_t)pid);
		thread_slot(replay, pid)->generation++;
		break;
	case PERF_PROCESS_UNCHANGED:
		break;
	}
}

/* The kernel's record of a thread leaving or coming back onto its CPU; per
 * CPU (PERF_RECORD_SWITCH_CPU_WIDE), it also names the other thread. */
static void replay_switch_record(struct replay *replay, const struct perf_event_header *record)
{
	uint32_t pid, tid, cpu, other[2];
	uint64_t time;
	int32_t next_tid = -1;
	const char *next_comm = NULL;

	if (!perf_data_reader_record_thread(replay->reader, record, &pid, &tid) ||
	    !perf_data_reader_record_time(replay->reader, record, &time))
		return;
	if (!(record->misc & PERF_RECORD_MISC_SWITCH_OUT)) {
		if (record->type == PERF_RECORD_SWITCH)
			off_cpu_add_return(
			    replay->profile,
			    &(struct profile_sample){
				.time = time,
				.pid = pid,
				.tid = tid,
				.cpu = perf_data_reader_record_cpu(replay->reader, record, &cpu)
					   ? cpu
					   : 0,
				.stack = profile_intern_stack(replay->profile, NULL, 0),
				.process_name = thread_name(replay, pid),
				.thread_name = thread_name(replay, tid)});
		else
			off_cpu_add_switch_in(replay->profile, tid, time);
		return;
	}
	if (record->type == PERF_RECORD_SWITCH_CPU_WIDE &&
	    record->size >= sizeof(*record) + sizeof(other)) {
		memcpy(other, record + 1, sizeof(other)); /* next_prev_pid, next_prev_tid */
		next_tid = (int32_t)other[1];
		next_comm = other[1] ? thread_name(replay, other[1]) : "swapper";
	}
	off_cpu_add_switch_record(replay->profile, tid, time,
				  record->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, next_tid,
				  next_comm);
}

static void replay_side_record(struct replay *replay, const struct perf_event_header *record)
{
	char text[4096];

	follow_code(replay, record);
	switch (record->type) {
	case PERF_RECORD_COMM: {
		const struct perf_record_comm *comm = (const void *)record;

		if (record->size < sizeof(*comm))
			break;
		perf_record_copy_string(record, comm->comm, text, sizeof(text));
		set_thread_name(replay, comm->tid, text);
		break;
	}
	case PERF_RECORD_FORK: {
		const struct perf_record_task *task = (const void *)record;
		const char *parent_name;

		if (record->size < sizeof(*task))
			break;
		/* A new process is its parent's copy, also where its pid
		 * named another before. */
		parent_name = thread_slot(replay, task->parent_tid)->name;
		if (!thread_slot(replay, task->tid)->name || task->pid != task->parent_pid)
			thread_slot(replay, task->tid)->name = parent_name;
		break;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		replay_switch_record(replay, record);
		break;
	case PERF_RECORD_LOST:
		if (record->size >= sizeof(struct perf_record_lost))
			replay->profile->lost_samples +=
			    ((const struct perf_record_lost *)record)->lost;
		break;
	}
}

int replay_capture(const char *perf_data_path, struct resolver *resolver, struct profile *profile)
{
	struct replay replay = {.resolver = resolver, .profile = profile, .switch_event = -1};
	char error[256];
	int status;

	replay.reader = perf_data_reader_open(perf_data_path, error, sizeof(error));
	if (!replay.reader) {
		report_error("%s", error);
		return -1;
	}
	if (perf_data_reader_event_count(replay.reader) > 0) {
		const struct perf_event_attr *attr = perf_data_reader_attr(replay.reader, 0);

		profile->event_name = string_table_intern(
		    profile->strings, perf_data_reader_event_name(replay.reader, 0));
		/* 0 means the kernel's default limit, 127 frames. */
		profile->max_stack_depth = attr->sample_max_stack ? attr->sample_max_stack : 127;
	}
	profile->has_wall_clock =
	    perf_data_reader_wall_clock_offset(replay.reader, &profile->wall_clock_offset);
	/* Switches: the tracepoint, or the software event beside the sampling
	 * one (a capture of context-switches alone is a profile of them). */
	for (size_t i = 0; i < perf_data_reader_event_count(replay.reader); i++) {
		const char *name = perf_data_reader_event_name(replay.reader, i);

		bool tracepoint = !strcmp(name, "sched:sched_switch");

		if (tracepoint || (i > 0 && !strcmp(name, "context-switches"))) {
			replay.switch_event = (long)i;
			replay.switch_tracepoint = tracepoint;
		}
	}
	status =
	    perf_data_reader_for_each(replay.reader, keep_record, &replay, error, sizeof(error));
	if (status < 0)
		report_warning("%s: using the %zu records before the damage", error,
			       replay.record_count);
	time_order_take_until(&replay.waiting, UINT64_MAX, replay_kept, &replay);
	off_cpu_pair(profile, replay.latest_time);
	profile->compressed_capture = perf_data_reader_saw_compressed(replay.reader);
	free_record_blocks(replay.blocks);
	time_order_release(&replay.waiting);
	free(replay.threads);
	free(replay.versions);
	perf_data_reader_close(replay.reader);
	return 0;
}
