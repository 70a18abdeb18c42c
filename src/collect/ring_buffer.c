#include "ring_buffer.h"
#include "perf_record_mapping.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ring_buffer_map(struct ring_buffer *ring, int fd, unsigned pages)
{
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	void *base = mmap(NULL, (pages + 1) * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return -1;
	*ring = (struct ring_buffer){.fd = fd, .page = base, .data_size = pages * page_size};
	return 0;
}

void ring_buffer_unmap(struct ring_buffer *ring)
{
	if (ring->page)
		munmap(ring->page, ring->data_size + (size_t)sysconf(_SC_PAGESIZE));
	free(ring->scratch);
	*ring = (struct ring_buffer){.fd = -1};
}

/* Where the draining of one ring stands: its records from `tail` up to
 * `head`, as the kernel had written them when the drain began, and the
 * next of them with its time. */
struct ring_cursor {
	struct ring_buffer *ring;
	const unsigned char *data;
	uint64_t tail, head;
	const struct perf_event_header *record; /* NULL: none left */
	uint64_t time;				/* a record without one keeps its ring's last */
};

/* The record at the cursor's tail, whole: from the ring's scratch copy
 * when the end of the buffer splits it. */
static void peek(struct ring_cursor *cursor, const struct perf_event_attr *attr)
{
	struct ring_buffer *ring = cursor->ring;
	size_t offset = cursor->tail % ring->data_size, size;
	const struct perf_event_header *record = (const void *)(cursor->data + offset);

	cursor->record = NULL;
	if (cursor->tail >= cursor->head)
		return;
	size = record->size;
	if (size < sizeof(*record) || size % sizeof(uint64_t) ||
	    size > cursor->head - cursor->tail) {
		ring->dropped_bytes += cursor->head - cursor->tail;
		cursor->tail = cursor->head;
		return;
	}
	if (offset + size > ring->data_size) {
		size_t first_part = ring->data_size - offset;

		if (!ring->scratch)
			ring->scratch = xmalloc(RING_BUFFER_MAX_RECORD);
		memcpy(ring->scratch, record, first_part);
		memcpy(ring->scratch + first_part, cursor->data, size - first_part);
		record = (const void *)ring->scratch;
	}
	cursor->record = record;
	perf_record_time(attr, record, &cursor->time);
}

int ring_buffers_drain(struct ring_buffer *rings, size_t count, const struct perf_event_attr *attr,
		       record_sink sink, void *context)
{
	struct ring_cursor *cursors = xmalloc(count * sizeof(*cursors));
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	int status = 0;

	for (size_t i = 0; i < count; i++) {
		cursors[i] = (struct ring_cursor){
		    .ring = &rings[i],
		    .data = (const unsigned char *)rings[i].page + page_size,
		    .tail = rings[i].page->data_tail,
		    .head = __atomic_load_n(&rings[i].page->data_head, __ATOMIC_ACQUIRE),
		};
		peek(&cursors[i], attr);
	}
	while (status == 0) {
		struct ring_cursor *oldest = NULL;

		for (size_t i = 0; i < count; i++)
			if (cursors[i].record && (!oldest || cursors[i].time < oldest->time))
				oldest = &cursors[i];
		if (!oldest)
			break;
		status = sink(oldest->record, context);
		oldest->tail += oldest->record->size;
		peek(oldest, attr);
	}
	for (size_t i = 0; i < count; i++)
		__atomic_store_n(&rings[i].page->data_tail, cursors[i].tail, __ATOMIC_RELEASE);
	free(cursors);
	return status;
}
