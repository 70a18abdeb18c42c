/* A reader of the nettrace format (versions 4 and 5: what EventPipe streams
 * through the diagnostics IPC, as TraceEvent's EventPipeEventSource reads
 * it): the trace header, metadata, stacks and each event with its payload.
 * The input comes from a process being profiled, or from a file someone
 * sent: every length and id is checked against the bytes there are. */
#ifndef PROFCPU_NETTRACE_H
#define PROFCPU_NETTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nettrace_info {
	uint64_t start_timestamp; /* SyncTimeQPC: when the session began */
	uint64_t ticks_per_second;
	uint32_t pointer_size, process_id;
	bool truncated; /* the stream ends early (a session cut short) */
};

struct nettrace_event {
	const char *provider; /* ASCII, from the event's metadata; "" if unknown */
	const char *name;     /* often "" (runtime events carry no name) */
	uint32_t id, version;
	uint64_t timestamp, thread_id;
	const uint8_t *payload; /* within the parsed bytes: valid as long as they are */
	size_t payload_size;
	const uint8_t *stack; /* instruction pointers, pointer_size bytes each */
	size_t stack_depth;
};

typedef void (*nettrace_event_fn)(const struct nettrace_event *event, void *context);

/* Calls `on_event` for each event of the `size` bytes at `data`, in stream
 * order. Returns 0 (also for a stream cut short: info->truncated says so),
 * or -1 with a one-line reason in `why` when the data is not nettrace or
 * is damaged; events before the damage have been passed on. */
int nettrace_parse(const uint8_t *data, size_t size, struct nettrace_info *info,
		   nettrace_event_fn on_event, void *context, char *why, size_t why_size);

typedef int (*nettrace_bytes_fn)(const uint8_t *data, size_t size, void *context, char *why,
				 size_t why_size);

/* Maps the nettrace file at `path` (a regular file of at most 4 GiB, not
 * followed through a symlink) and hands its bytes to `parse`. Returns what
 * `parse` returns, or -1 with a reason in `why` when the file cannot be
 * read. */
int nettrace_map_file(const char *path, nettrace_bytes_fn parse, void *context, char *why,
		      size_t why_size);

/* Reads one UTF-16 string with its terminator from `*payload` (advancing
 * it past the terminator) into `out` as ASCII ('?' for the rest). Returns
 * false when no terminator lies within `*remaining` bytes. */
bool nettrace_read_string(const uint8_t **payload, size_t *remaining, char *out, size_t out_size);

#endif
