#include "sched_switch.h"

#include "perf_data.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of user stack copied with each switch (see sched_switch_attr). */
#define SCHED_SWITCH_STACK_SIZE 8192

/* tracefs, where it is mounted today, and under debugfs on older systems. */
static const char *const tracefs_roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/* Reads a small tracefs file (at most 64 KiB) into a malloc'd string. */
static char *read_tracefs_file(const char *relative, size_t *size)
{
	for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(*tracefs_roots); i++) {
		char *path = xasprintf("%s/%s", tracefs_roots[i], relative);
		FILE *file = fopen(path, "re");
		char *text;

		free(path);
		if (!file)
			continue;
		text = xmalloc(65536);
		*size = fread(text, 1, 65535, file);
		text[*size] = '\0';
		fclose(file);
		return text;
	}
	return NULL;
}

int sched_switch_attr(struct perf_event_attr *sampling, bool per_thread,
		      struct perf_event_attr *attr)
{
	size_t size;
	char *id_text = read_tracefs_file("events/sched/sched_switch/id", &size);
	char *end;
	unsigned long long id = id_text ? strtoull(id_text, &end, 10) : 0;

	free(id_text);
	if (!id) {
		report_error(
		    "cannot read the id of the tracepoint sched:sched_switch (%s): off-CPU "
		    "time needs tracefs mounted and readable (root, or CAP_DAC_READ_SEARCH); "
		    "as root: mount -t tracefs nodev /sys/kernel/tracing",
		    errno ? strerror(errno) : "no such event");
		return -1;
	}
	sampling->sample_type |= PERF_SAMPLE_IDENTIFIER;
	*attr = *sampling;
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	attr->freq = 0;
	attr->sample_period = 1;
	attr->sample_type |= PERF_SAMPLE_RAW;
	attr->context_switch = per_thread;
	/* A thread leaves the CPU from a system call or an interrupt, with
	 * native frames to unwind (libc's wait, the runtime's) near its stack
	 * pointer; a copy smaller than the samples' keeps frequent switches
	 * cheaper to record and to write. But not too small: with 4 KB the
	 * stacks of .NET thread-pool threads blocked in Task.Wait ended at
	 * Kestrel's request loop (0.3% of their blocked time reached
	 * start_thread; 100% with 8 KB, for about 15% more CPU at 10,000
	 * switches a second). */
	if (attr->sample_stack_user > SCHED_SWITCH_STACK_SIZE)
		attr->sample_stack_user = SCHED_SWITCH_STACK_SIZE;
	/* The side records (mappings, names, forks) come with the samples. */
	attr->mmap = attr->mmap2 = attr->comm = attr->comm_exec = attr->task = 0;
	attr->mmap_data = 0;
	return 0;
}

uint8_t *sched_switch_tracing_data(size_t *size)
{
	size_t page_size = 0, event_size = 0, format_size = 0;
	char *header_page = read_tracefs_file("events/header_page", &page_size);
	char *header_event = read_tracefs_file("events/header_event", &event_size);
	char *format = read_tracefs_file("events/sched/sched_switch/format", &format_size);
	uint8_t *data = NULL;

	if (header_page && header_event && format) {
		const char *formats[] = {format};

		data =
		    perf_data_tracing_data_build(header_page, page_size, header_event, event_size,
						 "sched", formats, &format_size, 1, size);
	}
	free(header_page);
	free(header_event);
	free(format);
	return data;
}

void sched_switch_explain_open_error(int error)
{
	if (error == EACCES || error == EPERM)
		report_error("the kernel refused the tracepoint sched:sched_switch (%s): its raw "
			     "fields need CAP_PERFMON, or CAP_SYS_ADMIN on kernels before 5.8 "
			     "(where CAP_PERFMON is not enough), or kernel.perf_event_paranoid "
			     "at -1 (sysctl -w kernel.perf_event_paranoid=-1); or collect "
			     "without off-CPU time",
			     strerror(error));
	else
		report_error("cannot record the tracepoint sched:sched_switch: perf_event_open: %s",
			     strerror(error));
}
