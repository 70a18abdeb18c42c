#include "capture.h"
#include "copied_images.h"
#include "jitdump.h"
#include "memory_perfmap.h"
#include "memory_perfmaps.h"
#include "perf_data.h"
#include "perf_event_names.h"
#include "perf_record_mapping.h"
#include "record.h"
#include "resolver.h"
#include "runtime_files.h"
#include "stack_trim.h"
#include "stop_signals.h"
#include "switch_events.h"
#include "synthesize.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* How often what was sampled goes to the disk: a crash, a SIGKILL or a
 * disk filling up later loses at most this much. */
#define FLUSH_INTERVAL_SECONDS 1

struct writer_sink {
	struct perf_data_writer *writer;
	struct runtime_files *runtime_files;
	const struct perf_event_attr *attr;	   /* of the samples */
	const struct perf_event_attr *switch_attr; /* of the switches, or NULL */
	struct stack_trim *stack_trim;		   /* NULL: copies kept whole */
	struct copied_images *copied_images;	   /* copied_images.h */
	int error;
	time_t last_flush; /* CLOCK_MONOTONIC seconds */
	/* For a new perf.data each period (capture_options.period). */
	const struct capture_options *options;
	struct perf_data_info info;
	bool compress;
	char *path;
	_Alignas(8) unsigned char trimmed[UINT16_MAX + 1]; /* a sample without its stale bytes */
};

static time_t monotonic_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec;
}

/* The JIT code of `sample`'s frames, named from the runtime's memory: the
 * kernel's callchain and the collector's walk, which the replay's may
 * repeat. */
static void name_from_memory(struct writer_sink *sink, const struct perf_sample *sample)
{
	const uint64_t *frames = NULL;
	size_t count = 0;

	if (sink->stack_trim)
		stack_trim_last_walk(sink->stack_trim, &frames, &count);
	if (sink->options->memory_perfmap)
		memory_perfmap_sample(sink->options->memory_perfmap, sample, frames, count);
	if (sink->options->memory_perfmaps)
		memory_perfmaps_sample(sink->options->memory_perfmaps, sample, frames, count);
}

/* `record` as it goes into perf.data: a sample whose walk the collector is
 * certain of with the walked frames as its user callchain and no stack copy
 * (stack_trim_walked()); another's stack copy cut to what the replay's walk
 * needs (stack_trim.h), and never longer than the kernel filled it; a copy
 * that ended early (at the top of the stack, or an unmapped page) is padded
 * to its full size with stale ring buffer bytes. A switch's record is laid
 * out by its own attr (its raw fields, a smaller copy). */
static const struct perf_event_header *trimmed_record(struct writer_sink *sink,
						      const struct perf_event_header *record)
{
	struct perf_sample sample;
	const uint64_t *frames;
	size_t frame_count;
	uint64_t keep;

	if (record->type != PERF_RECORD_SAMPLE) {
		if (sink->stack_trim)
			stack_trim_follow(sink->stack_trim, record);
		return record;
	}
	if (!perf_sample_parse_with_stack(sink->attr, record, &sample) &&
	    !(sink->switch_attr &&
	      perf_sample_parse_with_stack(sink->switch_attr, record, &sample)))
		return record;
	if (sink->options->sampled)
		sink->options->sampled(sample.pid, sink->options->period_context);
	keep = sink->stack_trim ? stack_trim_needed(sink->stack_trim, &sample) : UINT64_MAX;
	if (sink->options->memory_perfmap || sink->options->memory_perfmaps)
		name_from_memory(sink, &sample);
	if (sink->stack_trim && sample.callchain &&
	    stack_trim_walked(sink->stack_trim, &frames, &frame_count) &&
	    perf_sample_with_user_frames(record, &sample, frames, frame_count, sink->trimmed))
		return (const struct perf_event_header *)sink->trimmed;
	if (!perf_sample_trim_user_stack(record, &sample, keep, sink->trimmed)) {
		if (!sink->stack_trim)
			return record;
		memcpy(sink->trimmed, record, record->size);
	}
	if (sink->stack_trim) {
		uint8_t *copy = sink->trimmed + (sample.user_stack - (const uint8_t *)record);
		uint64_t kept;

		memcpy(&kept, copy - sizeof(kept), sizeof(kept));
		stack_trim_clear_unread(sink->stack_trim, copy, (size_t)kept);
	}
	return (const struct perf_event_header *)sink->trimmed;
}

/* The recording's walk meets JIT code it does not know yet. */
static bool read_target_jitdump(void *runtime_files, uint64_t time)
{
	return runtime_files_read_jitdump(runtime_files, time);
}

/* Whether the target's jitdump, as copied by `time`, names `address`:
 * memory_perfmap.h then leaves it alone. */
static bool named_by_jitdump(void *context, uint64_t address, uint64_t time)
{
	struct writer_sink *sink = context;
	struct code_range range;

	return sink->runtime_files && runtime_files_read_jitdump(sink->runtime_files, time) &&
	       jitdump_lookup(sink->options->jitdump, address, time, &range);
}

static int add_record(const struct perf_event_header *record, void *context)
{
	struct writer_sink *sink = context;

	return perf_data_writer_add(sink->writer, trimmed_record(sink, record));
}

/* After a record of anonymous code (the kernel's, of code new while
 * sampling, or synthesized, of code there before): when that code is a
 * .NET image's copy, records that describe it as the image's file, with
 * the record's sample_id (synthesize_copied_image()). */
static int describe_copied_image(struct writer_sink *sink, const struct perf_event_header *record)
{
	size_t trailer_size = perf_record_trailer_words(sink->attr) * sizeof(uint64_t);
	struct perf_mapping mapping;

	if (!perf_record_mapping(record, &mapping) || !copied_images_may_hold(mapping.path) ||
	    record->size < sizeof(*record) + trailer_size)
		return 0;
	return synthesize_copied_image((pid_t)mapping.pid, mapping.address,
				       mapping.address + mapping.length,
				       (const char *)record + record->size - trailer_size,
				       trailer_size, sink->copied_images, add_record, sink);
}

static int write_record(const struct perf_event_header *record, void *context)
{
	struct writer_sink *sink = context;
	int status;

	/* While records flow, so do the JIT runtime's files: a perf map line
	 * is dated by the poll that first sees it. */
	runtime_files_poll(sink->runtime_files);
	status = add_record(record, sink);
	if (status == 0)
		status = describe_copied_image(sink, record);
	if (status == 0 && monotonic_seconds() - sink->last_flush >= FLUSH_INTERVAL_SECONDS) {
		sink->last_flush = monotonic_seconds();
		status = perf_data_writer_flush(sink->writer);
	}
	if (status < 0)
		sink->error = errno;
	return status;
}

/* record_options.end_period: finishes this period's perf.data, hands its
 * folder over and starts the next period's file. */
static int start_next_period(void *context)
{
	struct writer_sink *sink = context;
	char *dir, *finished = xstrdup(sink->path), *slash = strrchr(finished, '/');

	if (perf_data_writer_finish(sink->writer) < 0 && !sink->error)
		sink->error = errno;
	sink->writer = NULL;
	*slash = '\0';
	dir = sink->options->next_period(finished, sink->options->period_context);
	free(finished);
	if (!dir)
		return sink->options->period_ended && *sink->options->period_ended ? 1 : -1;
	free(sink->path);
	sink->path = xasprintf("%s/perf.data", dir);
	free(dir);
	sink->writer = perf_data_writer_create(sink->path, sink->attr, &sink->info, sink->compress);
	if (!sink->writer) {
		sink->error = errno;
		return -1;
	}
	return 0;
}

static const char *stop_reason_text(enum record_stop_reason reason)
{
	switch (reason) {
	case RECORD_STOPPED_BY_DURATION:
		return "the duration ended";
	case RECORD_STOPPED_BY_SIGNAL: {
		static char text[32];

		snprintf(text, sizeof(text), "interrupted by %s", stop_signals_name());
		return text;
	}
	case RECORD_STOPPED_BY_TARGET_EXIT:
		return "the target exited";
	case RECORD_STOPPED_BY_WRITE_ERROR:
		return "writing perf.data failed";
	case RECORD_STOPPED_BY_CALLER:
		return "its last period ended";
	}
	return "";
}

static void log_summary(FILE *log, const struct record_summary *summary)
{
	fprintf(log,
		"samples: %llu\nlost samples: %llu\nthreads: %u\nseconds: %.1f\n"
		"kernel frames: %s\nstopped: %s\n",
		(unsigned long long)summary->samples, (unsigned long long)summary->lost_samples,
		summary->threads_seen, summary->elapsed_seconds,
		summary->kernel_frames ? "yes" : "no (refused by the kernel)",
		stop_reason_text(summary->stop_reason));
}

/* A write error (a full disk) stopped the capture: say how much of it the
 * file still holds, which perf script and postprocess read. */
static void report_kept_data(const char *path, int error, const struct record_summary *summary)
{
	struct stat status;
	double mebibytes = stat(path, &status) == 0 ? (double)status.st_size / (1 << 20) : 0;

	report_error("writing %s failed after %.1f s: %s; it keeps the %.2f MiB of records "
		     "written until then, which perf and profcpu postprocess read%s",
		     path, summary->elapsed_seconds, strerror(error), mebibytes,
		     error == ENOSPC ? "; free some disk space, or collect with -o on another "
				       "disk"
				     : "");
}

static int busier_first(const void *a, const void *b)
{
	const struct process_entry *x = a, *y = b;

	return (x->cpu_ticks < y->cpu_ticks) - (x->cpu_ticks > y->cpu_ticks);
}

/* An idle target is often an init process (tini, sh) whose child is the
 * real service, or Kubernetes' pause process when the pod shares one PID
 * namespace: name its children, else the busiest processes in sight. */
static void suggest_busy_processes(const struct target_process *target)
{
	struct process_entry *processes;
	size_t count = target_process_list(&processes), shown = 0;
	bool children = false;

	for (size_t i = 0; i < count; i++)
		children |= processes[i].parent == target->pid;
	qsort(processes, count, sizeof(*processes), busier_first);
	for (size_t i = 0; i < count && shown < 3; i++) {
		if (processes[i].pid == target->pid ||
		    (children && processes[i].parent != target->pid) || !processes[i].cpu_ticks)
			continue;
		fprintf(stderr,
			"profcpu: pid %d (%s) used no CPU; %s pid %d (%s) may be the one to "
			"profile: profcpu collect -pid %d\n",
			(int)target->pid, target->comm, children ? "its child" : "the busy process",
			(int)processes[i].pid, processes[i].comm, (int)processes[i].pid);
		shown++;
	}
	free(processes);
}

/* The stack copy a ring buffer of `pages` holds: a sample at most half the
 * buffer, with room for its other fields (callchain, registers), else the
 * kernel drops every sample without counting it lost. */
static unsigned fitting_stack_size(unsigned stack_size, unsigned pages)
{
	long buffer = (long)pages * sysconf(_SC_PAGESIZE);
	long fitting = (buffer / 2 - 2048) & ~7L;

	if (fitting < 64)
		fitting = 64;
	if ((long)stack_size <= fitting)
		return stack_size;
	report_warning("a ring buffer of %u pages cannot hold samples with %u bytes of stack: "
		       "copying %ld bytes (raise -buffersize for more)",
		       pages, stack_size, fitting);
	return (unsigned)fitting;
}

/* The switch event beside the sampling event in perf.data: both events'
 * ids, and the tracing data perf reads the tracepoint with. */
static void describe_switch_event(const struct record_session *session,
				  const struct switch_events *switches_chosen,
				  struct perf_data_extra_event *switch_event,
				  struct perf_data_info *info)
{
	const struct record_event_ids *sampling = record_event_ids(session, RECORD_EVENT_SAMPLING);
	const struct record_event_ids *switches = record_event_ids(session, RECORD_EVENT_SWITCH);

	info->event_ids = sampling->ids;
	info->event_id_count = sampling->count;
	switch_event->ids = switches->ids;
	switch_event->id_count = switches->count;
	info->more_events = switch_event;
	info->more_event_count = 1;
	switch_event->attr = switches_chosen->attr;
	switch_event->name = switches_chosen->name;
	info->tracing_data = switch_events_tracing_data(switches_chosen, &info->tracing_data_size);
	if (switches_chosen->tracepoint && !info->tracing_data)
		report_warning("cannot read tracefs' event formats: perf script will not print the "
			       "fields of sched:sched_switch");
}

int capture_target(const struct capture_options *options, const struct target_process *target,
		   const char *dir, FILE *log)
{
	struct record_options record_options = {
	    .duration = options->duration,
	    .frequency = options->frequency,
	    .show_progress = isatty(STDERR_FILENO) && options->period <= 0,
	    .period = options->period,
	    .end_period = start_next_period,
	};
	struct perf_event_attr attr;
	struct record_session *session;
	struct record_summary summary;
	struct perf_data_info info;
	struct switch_events switches;
	struct perf_data_extra_event switch_event = {0};
	struct writer_sink sink = {.last_flush = monotonic_seconds(),
				   .attr = &attr,
				   .options = options,
				   .compress = options->compress,
				   .path = xasprintf("%s/perf.data", dir)};
	const char *counted;
	unsigned stack_size = options->call_graph == CALL_GRAPH_FP
				  ? options->stack_size
				  : fitting_stack_size(options->stack_size, options->buffer_pages);

	record_default_attr(&attr, options->frequency, options->call_graph, stack_size);
	if (options->hardware_events) {
		int error = record_use_cpu_cycles(&attr, target->pid);

		if (error)
			report_warning("-hwevents: this machine cannot sample CPU cycles (%s; no "
				       "hardware PMU, as in most virtual machines): sampling "
				       "cpu-clock instead",
				       strerror(error));
	}
	if (options->off_cpu)
		switch_events_choose(&attr, target->pid != TARGET_EVERY_PROCESS || target->cgroup,
				     &switches);
	session = record_open(target, &attr, options->off_cpu ? &switches.attr : NULL,
			      options->buffer_pages);
	if (!session) {
		free(sink.path);
		return -1;
	}
	/* A thread leaves the CPU in the kernel: the software event counts
	 * nothing where kernel samples are refused. */
	if (options->off_cpu && !switches.tracepoint && switches.attr.exclude_kernel)
		report_warning(
		    "the kernel refused kernel samples (kernel.perf_event_paranoid is 2): "
		    "no off-CPU time can be recorded; give profcpu CAP_PERFMON, or "
		    "sysctl -w kernel.perf_event_paranoid=1");
	/* The writer fills in the machine's details itself. */
	info = (struct perf_data_info){.event_name = perf_event_name_from_attr(&attr),
				       .command_line = options->command_line};
	if (options->off_cpu) {
		describe_switch_event(session, &switches, &switch_event, &info);
		sink.switch_attr = &switch_event.attr;
	}
	sink.writer = perf_data_writer_create(sink.path, &attr, &info, options->compress);
	free((uint8_t *)info.tracing_data);
	/* Later periods' files: the tracing data is freed (no --off-cpu there). */
	sink.info = info;
	sink.info.tracing_data = NULL;
	if (!sink.writer) {
		report_error("cannot write %s: %s", sink.path, strerror(errno));
		record_close(session);
		free(sink.path);
		return -1;
	}
	fprintf(log, "event: %s at %u Hz, %u ring buffer pages per CPU\n", info.event_name,
		options->frequency, options->buffer_pages);
	fprintf(log, "call graph: %s", call_graph_name(options->call_graph));
	if (options->call_graph != CALL_GRAPH_FP)
		fprintf(log, ", %u bytes of user stack per sample", stack_size);
	fputc('\n', log);
	if (options->off_cpu)
		fprintf(log, "off-CPU: %s with %u bytes of user stack per switch\n", switches.name,
			options->call_graph == CALL_GRAPH_FP ? 0
							     : switch_event.attr.sample_stack_user);
	if (target->pid == TARGET_EVERY_PROCESS)
		fprintf(stderr, "profcpu: sampling every CPU%s%s with %s at %u Hz%s\n",
			target->cgroup ? " for cgroup " : "", target->cgroup ? target->cgroup : "",
			info.event_name, options->frequency,
			options->duration > 0 ? "" : "; Ctrl-C stops");
	else
		fprintf(stderr, "profcpu: sampling pid %d (%s) with %s at %u Hz%s\n",
			(int)target->pid, target->comm, info.event_name, options->frequency,
			options->duration > 0 ? "" : "; Ctrl-C stops");
	sink.runtime_files =
	    options->jitdump && (!options->memory_perfmap ||
				 memory_perfmap_is_for_misses(options->memory_perfmap))
		? runtime_files_follow(target, dir, options->jitdump, log)
		: NULL;
	if (options->memory_perfmap &&
	    memory_perfmap_start(options->memory_perfmap, dir, named_by_jitdump, &sink) < 0)
		report_warning("cannot write the perf map of names from the runtime's memory in "
			       "%s: %s; JIT frames will show as [JIT]",
			       dir, strerror(errno));
	if (options->memory_perfmaps)
		memory_perfmaps_start(options->memory_perfmaps, dir, log);
	sink.stack_trim = stack_trim_new(
	    target, &attr, options->call_graph, options->managed_images, options->native_symbols,
	    sink.runtime_files ? &(struct borrowed_jitdump){target->pid, options->jitdump,
							    read_target_jitdump, sink.runtime_files}
			       : NULL);
	sink.copied_images = copied_images_new();
	record_run(session, &record_options, write_record, &sink, &summary);
	record_close(session);
	copied_images_free(sink.copied_images);
	stack_trim_free(sink.stack_trim);
	runtime_files_finish(sink.runtime_files);
	if (options->memory_perfmap)
		memory_perfmap_stop(options->memory_perfmap, log);
	if (options->memory_perfmaps)
		memory_perfmaps_stop(options->memory_perfmaps, log);
	if (sink.writer && perf_data_writer_finish(sink.writer) < 0 && !sink.error)
		sink.error = errno;
	log_summary(log, &summary);
	/* The switch event's records are samples too, to the kernel. */
	counted = options->off_cpu ? "samples and switches" : "samples";
	if (options->stopped_early)
		*options->stopped_early = summary.stop_reason != RECORD_STOPPED_BY_DURATION;
	if (target->pid == TARGET_EVERY_PROCESS) /* threads are not counted one by one */
		fprintf(stderr, "profcpu: %llu %s in %.1f s, %llu lost; stopped: %s\n",
			(unsigned long long)summary.samples, counted, summary.elapsed_seconds,
			(unsigned long long)summary.lost_samples,
			stop_reason_text(summary.stop_reason));
	else
		fprintf(stderr,
			"profcpu: %llu %s from %u thread%s in %.1f s, %llu lost; stopped: %s\n",
			(unsigned long long)summary.samples, counted, summary.threads_seen,
			summary.threads_seen == 1 ? "" : "s", summary.elapsed_seconds,
			(unsigned long long)summary.lost_samples,
			stop_reason_text(summary.stop_reason));
	if (summary.samples == 0 && target->pid != TARGET_EVERY_PROCESS)
		suggest_busy_processes(target);
	if (summary.lost_samples && summary.ring_pages < options->buffer_pages)
		report_warning("%llu samples were lost in ring buffers of %u pages, which the "
			       "locked memory limit allowed instead of %u: give profcpu "
			       "CAP_IPC_LOCK, or raise its limit (podman or docker run --ulimit "
			       "memlock=-1, ulimit -l) or kernel.perf_event_mlock_kb on the node",
			       (unsigned long long)summary.lost_samples, summary.ring_pages,
			       options->buffer_pages);
	else if (summary.lost_samples)
		report_warning("%llu samples were lost: the ring buffer overflowed; raise "
			       "-buffersize or lower -F",
			       (unsigned long long)summary.lost_samples);
	if (sink.error)
		report_kept_data(sink.path, sink.error, &summary);
	free(sink.path);
	return 0;
}
