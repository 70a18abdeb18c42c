#include "sched_switch.h"

#include "perf_data.h"
#include "switch_stack.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool sched_switch_attr(struct perf_event_attr *sampling, bool per_thread,
		       struct perf_event_attr *attr)
{
	size_t size;
	char *id_text = read_tracefs_file("events/sched/sched_switch/id", &size);
	char *end;
	unsigned long long id = id_text ? strtoull(id_text, &end, 10) : 0;

	free(id_text);
	if (!id)
		return false;
	sampling->sample_type |= PERF_SAMPLE_IDENTIFIER;
	*attr = *sampling;
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	attr->freq = 0;
	attr->sample_period = 1;
	attr->sample_type |= PERF_SAMPLE_RAW;
	attr->context_switch = per_thread;
	switch_stack_limit(attr);
	return true;
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
