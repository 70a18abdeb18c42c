/* A perf_event ring buffer mapped from an event's file descriptor: the
 * kernel appends records, profcpu consumes them. */
#ifndef PROFCPU_RING_BUFFER_H
#define PROFCPU_RING_BUFFER_H

#include "perf_records.h"

#include <stddef.h>

struct ring_buffer {
	int fd;				   /* -1 when not mapped */
	struct perf_event_mmap_page *page; /* metadata page, then the data */
	size_t data_size;
};

/* The largest record: header.size has 16 bits. */
#define RING_BUFFER_MAX_RECORD 65536

/* Maps `pages` data pages (a power of two) of the event `fd`. Returns 0, or
 * -1 with errno set. */
int ring_buffer_map(struct ring_buffer *ring, int fd, unsigned pages);
void ring_buffer_unmap(struct ring_buffer *ring);

/* Passes the complete records, oldest first, to `sink` until it returns
 * non-zero, and frees the space they took. A record split by the end of the
 * buffer is passed from a copy in `scratch` (RING_BUFFER_MAX_RECORD bytes,
 * 8-byte aligned). Returns the sink's last answer, 0 when all was read. */
int ring_buffer_drain(struct ring_buffer *ring, unsigned char *scratch, record_sink sink,
		      void *context);

#endif
