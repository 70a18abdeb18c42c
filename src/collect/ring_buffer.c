#include "ring_buffer.h"

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
	*ring = (struct ring_buffer){.fd = -1};
}

int ring_buffer_drain(struct ring_buffer *ring, unsigned char *scratch, record_sink sink,
		      void *context)
{
	const unsigned char *data = (const unsigned char *)ring->page + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->page->data_tail;
	int status = 0;

	while (tail < head && status == 0) {
		size_t offset = tail % ring->data_size;
		const struct perf_event_header *record = (const void *)(data + offset);
		size_t size = record->size;

		if (size < sizeof(*record))
			break; /* cannot happen with a sane kernel; never loop forever */
		if (offset + size > ring->data_size) {
			size_t first_part = ring->data_size - offset;

			memcpy(scratch, data + offset, first_part);
			memcpy(scratch + first_part, data, size - first_part);
			record = (const void *)scratch;
		}
		status = sink(record, context);
		tail += size;
	}
	__atomic_store_n(&ring->page->data_tail, tail, __ATOMIC_RELEASE);
	return status;
}
