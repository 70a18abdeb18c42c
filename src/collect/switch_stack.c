#include "switch_stack.h"

void switch_stack_limit(struct perf_event_attr *attr)
{
	/* A thread leaves the CPU from a system call or an interrupt, with
	 * native frames to unwind (libc's wait, the runtime's) near its stack
	 * pointer; a copy smaller than the samples' keeps frequent switches
	 * cheaper to record and to write. But not too small: with 4 KB the
	 * stacks of .NET thread-pool threads blocked in Task.Wait ended at
	 * Kestrel's request loop (0.3% of their blocked time reached
	 * start_thread; 100% with 8 KB, for about 15% more CPU at 10,000
	 * switches a second). */
	if (attr->sample_stack_user > SWITCH_STACK_SIZE)
		attr->sample_stack_user = SWITCH_STACK_SIZE;
	attr->mmap = attr->mmap2 = attr->comm = attr->comm_exec = attr->task = 0;
	attr->mmap_data = 0;
}
