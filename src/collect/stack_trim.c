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
/* Processes whose last exec is remembered: past this many, all are
 * forgotten (a fork then found late is followed, as before). */
#define EXECS_REMEMBERED 65536

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
	uint64_t chain[MEMO_CHAIN_LENGTH];
	size_t chain_length;
	size_t slot_count; /* the slots read, and their values */
	uint32_t offsets[STACK_READS_LISTED];
	uint64_t values[STACK_READS_LISTED];
};

/* When a process last called exec(), by pid (0: an empty slot). */
struct exec_time {
	uint32_t pid;
	uint64_t time;
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
	/* The ring buffers are drained one CPU after the other, so a child's
	 * exec and mappings, written on the CPU it runs on, may come before
	 * the fork that made it, written on its parent's: that fork must not
	 * put the parent's mappings back (every walk of the child would fail
	 * and keep its whole copy). Open addressing, a power of two. */
	struct exec_time *execs;
	size_t exec_slots, exec_count;
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
	free(trim->execs);
	free(trim);
}

static struct exec_time *exec_slot(const struct stack_trim *trim, uint32_t pid)
{
	size_t slot = (pid * 2654435761u) & (trim->exec_slots - 1);

	while (trim->execs[slot].pid && trim->execs[slot].pid != pid)
		slot = (slot + 1) & (trim->exec_slots - 1);
	return &trim->execs[slot];
}

static void remember_exec(struct stack_trim *trim, uint32_t pid, uint64_t time)
{
	struct exec_time *slot;

	if (!pid)
		return;
	if (trim->exec_count == EXECS_REMEMBERED) {
		memset(trim->execs, 0, trim->exec_slots * sizeof(*trim->execs));
		trim->exec_count = 0;
	} else if (2 * (trim->exec_count + 1) > trim->exec_slots) {
		struct exec_time *old = trim->execs;
		size_t old_slots = trim->exec_slots;

		trim->exec_slots = old_slots ? 2 * old_slots : 64;
		trim->execs = xcalloc(trim->exec_slots, sizeof(*trim->execs));
		for (size_t i = 0; i < old_slots; i++)
			if (old[i].pid)
				*exec_slot(trim, old[i].pid) = old[i];
		free(old);
	}
	slot = exec_slot(trim, pid);
	trim->exec_count += !slot->pid;
	*slot = (struct exec_time){pid, time};
}

/* Whether `pid` called exec() after `time`: a record of its earlier
 * image (its fork, its exec, a mapping) found late. */
static bool execed_after(const struct stack_trim *trim, uint32_t pid, uint64_t time)
{
	const struct exec_time *slot = trim->exec_slots ? exec_slot(trim, pid) : NULL;

	return slot && slot->pid == pid && slot->time > time;
}

void stack_trim_follow(struct stack_trim *trim, const struct perf_event_header *record)
{
	struct perf_mapping mapping;
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
		trim->generation++;
		return;
	}
	switch (perf_record_process_change(record, &pid, &parent)) {
	case PERF_PROCESS_FORKED:
		if (execed_after(trim, pid, ((const struct perf_record_task *)record)->time))
			break;
		resolver_fork(trim->resolver, (pid_t)pid, (pid_t)parent);
		trim->generation++;
		break;
	case PERF_PROCESS_EXECED:
		if (execed_after(trim, pid, time))
			break;
		remember_exec(trim, pid, time);
		resolver_exec(trim->resolver, (pid_t)pid);
		trim->generation++;
		break;
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
	memo->slot_count = reads->count;
	for (size_t i = 0; i < reads->count; i++) {
		memo->offsets[i] = reads->offsets[i];
		memo->values[i] = slot_value(walk, reads->offsets[i]);
	}
}

uint64_t stack_trim_needed(struct stack_trim *trim, const struct perf_sample *sample)
{
	struct stack_walk_sample walk = {
	    .stack = {.bytes = sample->user_stack, .size = sample->user_stack_size},
	};
	struct remembered_walk *memo;
	struct stack_reads reads;
	size_t needed;
	bool exact;

	if (!perf_sample_frame_registers(sample, &walk.registers))
		return sample->user_stack_size;
	walk.stack.start = walk.registers.sp;
	/* The kernel's frame-pointer walk of user space follows its marker. */
	for (uint64_t i = 0; i < sample->callchain_length; i++)
		if (sample->callchain[i] == PERF_CONTEXT_USER) {
			walk.kernel_chain = &sample->callchain[i + 1];
			walk.kernel_chain_length = sample->callchain_length - i - 1;
			break;
		}
	memo = &trim->memo[sample->tid % MEMO_THREADS];
	trim->last = NULL;
	if (remembers(trim, memo, sample->tid, &walk)) {
		trim->last = memo->exact ? memo : NULL;
		return memo->needed;
	}
	trim->pid = (pid_t)sample->pid;
	trim->time = sample->time;
	resolver_set_time(trim->resolver, sample->time);
	needed = stack_walk_needed_size(trim->mode, &walk, look_up_code, trim, &reads, &exact);
	remember(trim, memo, sample->tid, &walk, needed, &reads);
	memo->exact = exact;
	if (memo->known && exact)
		trim->last = memo;
	return needed;
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
