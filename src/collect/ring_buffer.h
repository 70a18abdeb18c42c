/* perf_event ring buffers mapped from events' file descriptors, one a CPU:
 * the kernel appends records, profcpu consumes them in time order. */
#ifndef PROFCPU_RING_BUFFER_H
#define PROFCPU_RING_BUFFER_H

#include "perf_records.h"

#include <stddef.h>

struct ring_buffer {
	int fd;				   /* -1 when not mapped */
	struct perf_event_mmap_page *page; /* metadata page, then the data */
	size_t data_size;
	unsigned char *scratch; /* a record split by the buffer's end, whole;
				   RING_BUFFER_MAX_RECORD bytes from the first */
	/* Unread bytes dropped, never read as records: a record header that
	 * no kernel writes (a size not a multiple of 8, or past what the
	 * kernel wrote) means the reading is out of step with the records. */
	unsigned long long dropped_bytes;
};

/* The largest record: header.size has 16 bits. */
#define RING_BUFFER_MAX_RECORD 65536

/* Maps `pages` data pages (a power of two) of the event `fd`. Returns 0, or
 * -1 with errno set. */
int ring_buffer_map(struct ring_buffer *ring, int fd, unsigned pages);
void ring_buffer_unmap(struct ring_buffer *ring);

/* Passes the complete records of the `count` rings to `sink`, oldest
 * first across them (their events are `attr`'s, or start their samples as
 * it does), until it returns non-zero, and frees the space they took. Each
 * CPU's ring is in time order, but a process moves between CPUs: drained
 * one ring after the other, a new process's sample came before the
 * mapping it ran in, and the collector's walk of it could not be trusted.
 * Returns the sink's last answer, 0 when all was read. */
int ring_buffers_drain(struct ring_buffer *rings, size_t count, const struct perf_event_attr *attr,
		       record_sink sink, void *context);

#endif
