#include "perf_record_mapping.h"
#include "perf_records.h"

#include <string.h>
#include <sys/mman.h>

size_t perf_record_trailer_words(const struct perf_event_attr *attr)
{
	/* The trailer's words, those the attr samples, in this order: TID,
	 * TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
	static const uint64_t trailer_fields = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
					       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
					       PERF_SAMPLE_IDENTIFIER;

	return attr->sample_id_all
		   ? (size_t)__builtin_popcountll(attr->sample_type & trailer_fields)
		   : 0;
}

/* A sample's time: after its IDENTIFIER, IP and TID, those it has. */
static bool sample_time(const struct perf_event_attr *attr, const struct perf_event_header *record,
			uint64_t *time)
{
	size_t offset =
	    sizeof(*record) +
	    sizeof(uint64_t) * (size_t)__builtin_popcountll(
				   attr->sample_type &
				   (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID));

	if (!(attr->sample_type & PERF_SAMPLE_TIME) || record->size < offset + sizeof(*time))
		return false;
	memcpy(time, (const uint8_t *)record + offset, sizeof(*time));
	return true;
}

bool perf_record_time(const struct perf_event_attr *attr, const struct perf_event_header *record,
		      uint64_t *time)
{
	size_t words = perf_record_trailer_words(attr);
	size_t from_end = words - !!(attr->sample_type & PERF_SAMPLE_TID);

	if (record->type == PERF_RECORD_SAMPLE)
		return sample_time(attr, record, time);
	if (!words || !(attr->sample_type & PERF_SAMPLE_TIME) ||
	    record->size < sizeof(*record) + words * sizeof(uint64_t))
		return false;
	memcpy(time, (const uint8_t *)record + record->size - from_end * sizeof(uint64_t),
	       sizeof(*time));
	return true;
}

void perf_record_copy_string(const struct perf_event_header *record, const char *field, char *out,
			     size_t out_size)
{
	size_t available = (size_t)((const char *)record + record->size - field);
	size_t length = strnlen(field, available < out_size ? available : out_size - 1);

	memcpy(out, field, length);
	out[length] = '\0';
}

bool perf_record_mapping(const struct perf_event_header *record, struct perf_mapping *mapping)
{
	if (record->type == PERF_RECORD_MMAP2) {
		const struct perf_record_mmap2 *mmap = (const void *)record;

		if (record->size < sizeof(*mmap) || !(mmap->protection & PROT_EXEC))
			return false;
		*mapping = (struct perf_mapping){.pid = mmap->pid,
						 .address = mmap->address,
						 .length = mmap->length,
						 .page_offset = mmap->page_offset};
		/* A record may carry a build-id where the device and inode go. */
		if (!(record->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			mapping->major = mmap->major;
			mapping->minor = mmap->minor;
			mapping->inode = mmap->inode;
		}
		perf_record_copy_string(record, mmap->filename, mapping->path,
					sizeof(mapping->path));
		return true;
	}
	if (record->type == PERF_RECORD_MMAP) {
		const struct perf_record_mmap *mmap = (const void *)record;

		if (record->size < sizeof(*mmap) || record->misc & PERF_RECORD_MISC_MMAP_DATA ||
		    (record->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			return false;
		*mapping = (struct perf_mapping){.pid = mmap->pid,
						 .address = mmap->address,
						 .length = mmap->length,
						 .page_offset = mmap->page_offset};
		perf_record_copy_string(record, mmap->filename, mapping->path,
					sizeof(mapping->path));
		return true;
	}
	return false;
}

enum perf_process_change perf_record_process_change(const struct perf_event_header *record,
						    uint32_t *pid, uint32_t *parent)
{
	if (record->type == PERF_RECORD_FORK && record->size >= sizeof(struct perf_record_task)) {
		const struct perf_record_task *task = (const void *)record;

		*pid = task->pid;
		*parent = task->parent_pid;
		return task->pid != task->parent_pid ? PERF_PROCESS_FORKED : PERF_PROCESS_UNCHANGED;
	}
	if (record->type == PERF_RECORD_COMM && record->size >= sizeof(struct perf_record_comm) &&
	    record->misc & PERF_RECORD_MISC_COMM_EXEC) {
		const struct perf_record_comm *comm = (const void *)record;

		*pid = comm->pid;
		return comm->pid == comm->tid ? PERF_PROCESS_EXECED : PERF_PROCESS_UNCHANGED;
	}
	return PERF_PROCESS_UNCHANGED;
}
