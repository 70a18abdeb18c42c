#include "stack_trim.h"
#include "perf_record_mapping.h"
#include "perf_records.h"
#include "perf_user_registers.h"
#include "resolver.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Threads with a remembered walk (by tid, the last one wins a slot), and
 * the callchain length one is remembered with. */
#define MEMO_THREADS	  256
#define MEMO_CHAIN_LENGTH 128
/* The frames of a remembered walk kept, to write them again. */
#define MEMO_FRAMES 128
/* Processes whose last exec and code change are remembered: past this
 * many, all are forgotten (a fork then found late is followed, as before;
 * a sample older than the changes forgotten keeps its copy). */
#define PROCESSES_REMEMBERED 65536

/* A thread's last answer. A thread that blocks or spins in the same place
 * again and again has the same registers and the same return addresses and
 * saved registers on its stack each time (off-CPU switches: thousands a
 * second), and its walk gets the same result: the slots the walk read are
 * compared, not its locals, which change. */
struct remembered_walk {
	uint32_t tid;
	bool known;
	uint64_t generation;			     /* of the mappings it walked through */
	uint64_t ip, sp, bp, lr, stack_size, needed; /* lr: arm64's, 0 elsewhere */
	bool exact; /* only the slots read are read again by the replay */
	/* The other general registers the walk's rules read, and their values. */
	uint32_t general_read;
	uint64_t general[FRAME_GENERAL_REGISTERS];
	uint64_t chain[MEMO_CHAIN_LENGTH];
	size_t chain_length;
	size_t slot_count; /* the slots read, and their values */
	uint32_t offsets[STACK_READS_LISTED];
	uint64_t values[STACK_READS_LISTED];
	bool certain; /* frames: what every later walk finds (walked_stack) */
	uint64_t frames[MEMO_FRAMES];
	size_t frame_count;
};

/* When a process last called exec(), and when a side record last changed
 * its code (a mapping, its fork, its exec), by pid (0: an empty slot). */
struct process_times {
	uint32_t pid;
	uint64_t exec, changed;
};

struct stack_trim {
	struct resolver *resolver;
	const struct perf_event_attr *attr; /* of the side records */
	enum stack_walk_mode mode;
	pid_t pid;     /* of the sample walked */
	uint64_t time; /* of the sample walked */
	/* The sample the jitdump was last read for, and whether it was there
	 * to read. */
	uint64_t jitdump_read_at;
	pid_t jitdump_read_pid;
	bool jitdump_current;
	uint64_t generation; /* raised by every side record that changes code */
	struct remembered_walk memo[MEMO_THREADS];
	/* The last answer's walk, when a later walk reads only its slots. */
	const struct remembered_walk *last;
	/* The last sample's frames, when certain to be what the replay's walk
	 * finds (stack_trim_walked()); NULL otherwise. */
	const uint64_t *walked_frames;
	size_t walked_count;
	struct walked_stack walked;
	bool walked_now; /* `walked` is the last sample's walk */
	/* The ring buffers are read in time order one drain at a time, but a
	 * record may come a drain late (the kernel stamps its time before it
	 * writes it; a drain takes what each ring held when it began), so a
	 * child's exec and mappings, written on the CPU it runs on, may come
	 * before the fork that made it, written on its parent's: that fork
	 * must not put the parent's mappings back (every walk of the child
	 * would fail and keep its whole copy). Open addressing, a power of
	 * two. */
	struct process_times *processes;
	size_t process_slots, process_count;
	/* The same order may bring a mapping from after a sample before it:
	 * its walk then saw code the process did not have yet. The latest
	 * change followed, and the latest of those forgotten. */
	uint64_t latest_change, forgotten_before;
};

struct stack_trim *stack_trim_new(const struct target_process *target,
				  const struct perf_event_attr *attr, enum call_graph_mode mode,
				  struct managed_images *images, struct native_symbols *native,
				  const struct borrowed_jitdump *jitdump)
{
	bool every_process = target->pid == TARGET_EVERY_PROCESS;
	/* No symbol server: the files the target maps, debug files beside
	 * them, and its jitdump. Code whose CFI may be in a debug file the
	 * replay downloads is provisional. */
	struct resolver_config config = {
	    .native = {.target_root_fd = every_process ? -1 : target->root_fd, .offline = true},
	    .live_pid = every_process ? 0 : target->pid,
	    .live_namespace_pid = target->namespace_pid,
	    .live_every_process = every_process,
	    .managed_images = images,
	    .native_symbols = native,
	    .jitdump = jitdump ? *jitdump : (struct borrowed_jitdump){0},
	};
	struct stack_trim *trim;

	/* PROFCPU_KEEP_STACK_COPIES=1 writes the copies whole: for perf's own
	 * DWARF unwinder beyond the frame where hybrid's walk joins the
	 * callchain, or to compare. */
	if (mode == CALL_GRAPH_FP || getenv("PROFCPU_KEEP_STACK_COPIES"))
		return NULL;
	trim = xcalloc(1, sizeof(*trim));
	trim->resolver = resolver_new(&config);
	trim->attr = attr;
	trim->mode = mode == CALL_GRAPH_DWARF ? STACK_WALK_DWARF : STACK_WALK_HYBRID;
	return trim;
}

void stack_trim_free(struct stack_trim *trim)
{
	if (!trim)
		return;
	resolver_free(trim->resolver);
	free(trim->processes);
	free(trim);
}

static struct process_times *process_slot(const struct stack_trim *trim, uint32_t pid)
{
	size_t slot = (pid * 2654435761u) & (trim->process_slots - 1);

	while (trim->processes[slot].pid && trim->processes[slot].pid != pid)
		slot = (slot + 1) & (trim->process_slots - 1);
	return &trim->processes[slot];
}

/* `pid`'s times, or NULL when none are remembered. */
static const struct process_times *times_of(const struct stack_trim *trim, uint32_t pid)
{
	const struct process_times *slot = trim->process_slots ? process_slot(trim, pid) : NULL;

	return slot && slot->pid == pid ? slot : NULL;
}

/* `pid`'s times, made when new. */
static struct process_times *remembered_times(struct stack_trim *trim, uint32_t pid)
{
	struct process_times *slot;

	if (trim->process_count == PROCESSES_REMEMBERED) {
		memset(trim->processes, 0, trim->process_slots * sizeof(*trim->processes));
		trim->process_count = 0;
		trim->forgotten_before = trim->latest_change;
	} else if (2 * (trim->process_count + 1) > trim->process_slots) {
		struct process_times *old = trim->processes;
		size_t old_slots = trim->process_slots;

		trim->process_slots = old_slots ? 2 * old_slots : 64;
		trim->processes = xcalloc(trim->process_slots, sizeof(*trim->processes));
		for (size_t i = 0; i < old_slots; i++)
			if (old[i].pid)
				*process_slot(trim, old[i].pid) = old[i];
		free(old);
	}
	slot = process_slot(trim, pid);
	if (!slot->pid) {
		*slot = (struct process_times){.pid = pid};
		trim->process_count++;
	}
	return slot;
}

/* Whether `pid` called exec() after `time`: a record of its earlier
 * image (its fork, its exec, a mapping) found late. */
static bool execed_after(const struct stack_trim *trim, uint32_t pid, uint64_t time)
{
	const struct process_times *times = times_of(trim, pid);

	return times && times->exec > time;
}

/* A side record of `time` changed `pid`'s code. */
static struct process_times *changed(struct stack_trim *trim, uint32_t pid, uint64_t time)
{
	struct process_times *times;

	if (!pid)
		return NULL;
	times = remembered_times(trim, pid);
	if (time > times->changed)
		times->changed = time;
	if (time > trim->latest_change)
		trim->latest_change = time;
	return times;
}

/* Whether the code followed for `pid` is what it had at `time`, as far as
 * the records followed tell: none of them came from later. */
static bool code_as_at(const struct stack_trim *trim, uint32_t pid, uint64_t time)
{
	const struct process_times *times = times_of(trim, pid);

	return time >= trim->forgotten_before && (!times || times->changed <= time);
}

void stack_trim_follow(struct stack_trim *trim, const struct perf_event_header *record)
{
	struct perf_mapping mapping;
	const struct process_times *parent_times;
	uint32_t pid, parent;
	uint64_t time = 0; /* a record without one (synthesized): before any exec */

	perf_record_time(trim->attr, record, &time);
	if (perf_record_mapping(record, &mapping)) {
		struct mapped_file file = {
		    .path = mapping.path,
		    .identity = {mapping.major, mapping.minor, mapping.inode},
		};

		if (execed_after(trim, mapping.pid, time))
			return;
		resolver_add_mapping(trim->resolver, (pid_t)mapping.pid, mapping.address,
				     mapping.length, mapping.page_offset, &file);
		changed(trim, mapping.pid, time);
		trim->generation++;
		return;
	}
	switch (perf_record_process_change(record, &pid, &parent)) {
	case PERF_PROCESS_FORKED:
		time = ((const struct perf_record_task *)record)->time;
		if (execed_after(trim, pid, time))
			break;
		resolver_fork(trim->resolver, (pid_t)pid, (pid_t)parent);
		/* The child takes the parent's code as followed, which may
		 * hold changes from after the fork. */
		parent_times = times_of(trim, parent);
		changed(trim, pid,
			parent_times && parent_times->changed > time ? parent_times->changed
								     : time);
		trim->generation++;
		break;
	case PERF_PROCESS_EXECED: {
		struct process_times *times;

		if (execed_after(trim, pid, time))
			break;
		times = changed(trim, pid, time);
		if (times)
			times->exec = time;
		resolver_exec(trim->resolver, (pid_t)pid);
		trim->generation++;
		break;
	}
	case PERF_PROCESS_UNCHANGED:
		break;
	}
}

static void look_up_code(void *context, uint64_t address, struct code_at *code)
{
	struct stack_trim *trim = context;

	resolver_code_at(trim->resolver, trim->pid, address, code);
	if (code->kind == CODE_GENERATED && !code->unwind.info) {
		/* A runtime describes its code in the jitdump before it runs
		 * it: what was written by now has it, if anything does. */
		if (trim->jitdump_read_at != trim->time || trim->jitdump_read_pid != trim->pid) {
			trim->jitdump_read_at = trim->time;
			trim->jitdump_read_pid = trim->pid;
			trim->jitdump_current =
			    resolver_read_more_jitdump(trim->resolver, trim->pid);
			resolver_code_at(trim->resolver, trim->pid, address, code);
		}
		code->provisional = !code->unwind.info && !trim->jitdump_current;
	} else if (code->kind == CODE_WITHOUT_CFI)
		code->provisional = true; /* the replay may find its debug file */
}

static uint64_t slot_value(const struct stack_walk_sample *walk, uint32_t offset)
{
	uint64_t value;

	memcpy(&value, walk->stack.bytes + offset, sizeof(value));
	return value;
}

static bool remembers(const struct stack_trim *trim, const struct remembered_walk *memo,
		      uint32_t tid, const struct stack_walk_sample *walk)
{
	if (!memo->known || memo->tid != tid || memo->generation != trim->generation ||
	    memo->ip != walk->registers.ip || memo->sp != walk->registers.sp ||
	    memo->bp != walk->registers.bp || memo->lr != walk->registers.lr ||
	    memo->stack_size != walk->stack.size ||
	    memo->chain_length != walk->kernel_chain_length ||
	    (memo->chain_length &&
	     memcmp(memo->chain, walk->kernel_chain, memo->chain_length * sizeof(*memo->chain))))
		return false;
	for (size_t i = 0; i < memo->slot_count; i++)
		if (slot_value(walk, memo->offsets[i]) != memo->values[i])
			return false;
	for (unsigned regno = 0; regno < FRAME_GENERAL_REGISTERS; regno++)
		if ((memo->general_read >> regno & 1) &&
		    (!(walk->registers.general->known >> regno & 1) ||
		     walk->registers.general->values[regno] != memo->general[regno]))
			return false;
	return true;
}

static void remember(const struct stack_trim *trim, struct remembered_walk *memo, uint32_t tid,
		     const struct stack_walk_sample *walk, size_t needed,
		     const struct stack_reads *reads)
{
	memo->known =
	    reads->count <= STACK_READS_LISTED && walk->kernel_chain_length <= MEMO_CHAIN_LENGTH;
	if (!memo->known)
		return;
	memo->tid = tid;
	memo->generation = trim->generation;
	memo->ip = walk->registers.ip;
	memo->sp = walk->registers.sp;
	memo->bp = walk->registers.bp;
	memo->lr = walk->registers.lr;
	memo->stack_size = walk->stack.size;
	memo->needed = needed;
	memo->chain_length = walk->kernel_chain_length;
	if (memo->chain_length)
		memcpy(memo->chain, walk->kernel_chain, memo->chain_length * sizeof(*memo->chain));
	memo->general_read = reads->general_registers;
	for (unsigned regno = 0; regno < FRAME_GENERAL_REGISTERS; regno++)
		if (memo->general_read >> regno & 1)
			memo->general[regno] = walk->registers.general->values[regno];
	memo->slot_count = reads->count;
	for (size_t i = 0; i < reads->count; i++) {
		memo->offsets[i] = reads->offsets[i];
		memo->values[i] = slot_value(walk, reads->offsets[i]);
	}
}

/* Keeps the walk's frames in `memo` when they are certain and fit. */
static void remember_frames(struct remembered_walk *memo, const struct walked_stack *walked)
{
	memo->certain = walked->certain && walked->count <= MEMO_FRAMES;
	memo->frame_count = memo->certain ? walked->count : 0;
	memcpy(memo->frames, walked->frames, memo->frame_count * sizeof(*memo->frames));
}

uint64_t stack_trim_needed(struct stack_trim *trim, const struct perf_sample *sample)
{
	struct stack_walk_sample walk = {
	    .stack = {.bytes = sample->user_stack, .size = sample->user_stack_size},
	};
	struct general_registers general;
	struct remembered_walk *memo;
	struct stack_reads reads;
	size_t needed;
	bool exact, code_known;

	trim->last = NULL;
	trim->walked_frames = NULL;
	trim->walked_now = false;
	if (!perf_sample_frame_registers(sample, &walk.registers, &general))
		return sample->user_stack_size;
	walk.stack.start = walk.registers.sp;
	/* The kernel's frame-pointer walk of user space follows its marker. */
	for (uint64_t i = 0; i < sample->callchain_length; i++)
		if (sample->callchain[i] == PERF_CONTEXT_USER) {
			walk.kernel_chain = &sample->callchain[i + 1];
			walk.kernel_chain_length = sample->callchain_length - i - 1;
			break;
		}
	code_known = code_as_at(trim, sample->pid, sample->time);
	memo = &trim->memo[sample->tid % MEMO_THREADS];
	if (remembers(trim, memo, sample->tid, &walk)) {
		trim->last = memo->exact ? memo : NULL;
		if (memo->certain && code_known) {
			trim->walked_frames = memo->frames;
			trim->walked_count = memo->frame_count;
		}
		return memo->needed;
	}
	trim->pid = (pid_t)sample->pid;
	trim->time = sample->time;
	resolver_set_time(trim->resolver, sample->time);
	needed = stack_walk_needed_size(trim->mode, &walk, look_up_code, trim, &reads, &exact,
					&trim->walked);
	trim->walked_now = true;
	remember(trim, memo, sample->tid, &walk, needed, &reads);
	memo->exact = exact;
	if (memo->known) {
		remember_frames(memo, &trim->walked);
		if (exact)
			trim->last = memo;
	}
	if (trim->walked.certain && code_known) {
		trim->walked_frames = trim->walked.frames;
		trim->walked_count = trim->walked.count;
	}
	return needed;
}

bool stack_trim_walked(const struct stack_trim *trim, const uint64_t **frames, size_t *count)
{
	if (!trim->walked_frames)
		return false;
	*frames = trim->walked_frames;
	*count = trim->walked_count;
	return true;
}

bool stack_trim_last_walk(const struct stack_trim *trim, const uint64_t **frames, size_t *count)
{
	if (trim->walked_frames)
		return stack_trim_walked(trim, frames, count);
	if (!trim->walked_now)
		return false;
	*frames = trim->walked.frames;
	*count = trim->walked.count;
	return true;
}

void stack_trim_clear_unread(const struct stack_trim *trim, uint8_t *copy, size_t size)
{
	const struct remembered_walk *walk = trim->last;

	if (!walk)
		return;
	/* The copy's values of the slots read are the remembered ones. */
	memset(copy, 0, size);
	for (size_t i = 0; i < walk->slot_count; i++)
		if (walk->offsets[i] + sizeof(uint64_t) <= size)
			memcpy(copy + walk->offsets[i], &walk->values[i], sizeof(uint64_t));
}
