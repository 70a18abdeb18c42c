/* profcpu watch's captures: a folder of -o DIR per trigger, named by its
 * time and rule, with the ring's samples of its window as perf.data, the
 * target's perf map and jitdump copies, and every output collect writes. */
#ifndef PROFCPU_WATCH_CAPTURE_H
#define PROFCPU_WATCH_CAPTURE_H

#include "profile.h"
#include "push_options.h"
#include "resolver.h"
#include "target_process.h"
#include "watch_ring.h"
#include "watch_runtime.h"

#include <stdbool.h>
#include <stdint.h>

struct watch_capture {
	uint64_t from, to, trigger; /* CLOCK_MONOTONIC nanoseconds */
	const char *rule, *reason;
	const char *cut_short; /* why it ends before its window, or NULL */
	/* The runtime's events of the window (a .NET target), linked into the
	 * capture as runtime-1.nettrace and on; their profiles are among its
	 * outputs. */
	const struct watch_runtime_part *runtime_parts;
	size_t runtime_part_count;
};

struct watch_capture_writer;

/* Captures go into `output_dir`; the runtime's files are copied from
 * `ring_dir`; with `push` (may be NULL) each capture's profile is sent.
 * Every argument is borrowed for the writer's life. */
struct watch_capture_writer *
watch_capture_writer_new(const char *output_dir, const char *ring_dir, const char *command_line,
			 const struct target_process *target, const struct resolver_config *config,
			 const struct fold_options *fold, const struct push_options *push);

/* Each capture is also sent to `otlp` as OpenTelemetry profiles, each
 * process named `service` (NULL: its name), with `timeout` seconds of
 * silence allowed. */
void watch_capture_writer_otlp(struct watch_capture_writer *writer, const struct push_target *otlp,
			       double timeout, const char *service);

/* Writes the capture's folder and perf.data now, then its outputs (and
 * pushes its profile): here when `wait`, else in a child process while
 * sampling goes on. */
void watch_capture_write(struct watch_capture_writer *writer, const struct watch_ring *ring,
			 const struct watch_capture *capture, bool wait);

/* The mebibytes the captures written so far take. */
double watch_capture_disk_mib(const struct watch_capture_writer *writer);

/* Collects the children that finished; _all waits for every one. */
void watch_capture_reap(struct watch_capture_writer *writer);
void watch_capture_reap_all(struct watch_capture_writer *writer);

void watch_capture_writer_free(struct watch_capture_writer *writer);

#endif
