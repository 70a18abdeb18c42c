/* Decoding samples and the sample_id trailers of other records. Both
 * layouts follow the event's attr.sample_type (see perf_event_open(2)). */
#include "perf_data_reader_internal.h"

#include "perf_data_format.h"
#include "perf_record_mapping.h"

#include <stdlib.h>
#include <string.h>

/* The u64s of a record's body, read with bounds checks. */
struct words {
	const uint8_t *bytes;
	size_t count, next;
};

static struct words words_of(const struct perf_event_header *record)
{
	return (struct words){(const uint8_t *)(record + 1),
			      (record->size - sizeof(*record)) / sizeof(uint64_t), 0};
}

static uint64_t word_at(const struct words *words, size_t index)
{
	uint64_t value;

	memcpy(&value, words->bytes + index * sizeof(value), sizeof(value));
	return value;
}

static bool take(struct words *words, uint64_t *value)
{
	if (words->next >= words->count)
		return false;
	*value = word_at(words, words->next++);
	return true;
}

static bool skip(struct words *words, uint64_t count)
{
	if (count > words->count - words->next)
		return false;
	words->next += count;
	return true;
}

static int compare_id(const void *key, const void *element)
{
	uint64_t id = *(const uint64_t *)key;
	const struct perf_data_event_id *entry = element;

	return id < entry->id ? -1 : id > entry->id;
}

static long event_of_id(const struct perf_data_reader *reader, uint64_t id)
{
	const struct perf_data_event_id *found =
	    bsearch(&id, reader->ids, reader->id_count, sizeof(*reader->ids), compare_id);

	return found ? (long)found->event : -1;
}

static long event_of_sample(const struct perf_data_reader *reader,
			    const struct perf_event_header *record)
{
	struct words words = words_of(record);

	if (reader->event_count == 1)
		return 0;
	if ((size_t)reader->sample_id_index >= words.count)
		return -1;
	return event_of_id(reader, word_at(&words, (size_t)reader->sample_id_index));
}

static long event_of_trailer(const struct perf_data_reader *reader,
			     const struct perf_event_header *record)
{
	struct words words = words_of(record);

	if (reader->event_count == 1)
		return 0;
	if ((size_t)reader->trailer_id_index_from_end >= words.count)
		return -1;
	return event_of_id(
	    reader, word_at(&words, words.count - 1 - (size_t)reader->trailer_id_index_from_end));
}

/* PERF_SAMPLE_READ's size depends on attr.read_format. */
static bool skip_read_values(struct words *words, uint64_t read_format)
{
	uint64_t per_value =
	    1 + !!(read_format & PERF_FORMAT_ID) + !!(read_format & PERF_FORMAT_LOST);
	uint64_t times = !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t count = 1;

	if ((read_format & PERF_FORMAT_GROUP) && !take(words, &count))
		return false;
	if (!skip(words, times))
		return false;
	return count <= words->count && skip(words, count * per_value);
}

static const uint64_t *here(const struct words *words)
{
	return (const uint64_t *)(words->bytes + words->next * sizeof(uint64_t));
}

/* PERF_SAMPLE_RAW: { u32 size; char data[size]; }, padded to 8 bytes. */
static bool take_raw(struct words *words, struct perf_sample *sample)
{
	const uint8_t *start = (const uint8_t *)here(words);
	uint64_t first;

	if (!take(words, &first) ||
	    !skip(words, ((uint64_t)(uint32_t)first + sizeof(uint32_t) + 7) / 8 - 1))
		return false;
	sample->raw = start + sizeof(uint32_t);
	sample->raw_size = (uint32_t)first;
	return true;
}

/* PERF_SAMPLE_BRANCH_STACK: { u64 nr; u64 hw_idx (with
 * PERF_SAMPLE_BRANCH_HW_INDEX); { u64 from, to, flags; } entries[nr]; } */
static bool skip_branch_stack(struct words *words, uint64_t branch_sample_type)
{
	uint64_t count;

	if (!take(words, &count) || count > words->count)
		return false;
	return skip(words, !!(branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) + count * 3);
}

/* The fields after the callchain: RAW, then BRANCH_STACK skipped to find
 * REGS_USER ({ u64 abi; u64 regs[weight(mask)]; }, no regs with abi 0) and
 * STACK_USER ({ u64 size; char data[size]; u64 dyn_size; }, just { 0 } when
 * nothing was copied). */
static bool parse_user_stack(struct words *words, const struct perf_event_attr *attr,
			     struct perf_sample *sample)
{
	uint64_t type = attr->sample_type, abi, size, dyn_size;
	const uint8_t *data;

	if ((type & PERF_SAMPLE_RAW) && !take_raw(words, sample))
		return false;
	if ((type & PERF_SAMPLE_BRANCH_STACK) &&
	    !skip_branch_stack(words, attr->branch_sample_type))
		return false;
	if (type & PERF_SAMPLE_REGS_USER) {
		if (!take(words, &abi))
			return false;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			sample->user_registers = here(words);
			sample->user_register_mask = attr->sample_regs_user;
			if (!skip(words, (uint64_t)__builtin_popcountll(attr->sample_regs_user)))
				return false;
		}
	}
	if (!(type & PERF_SAMPLE_STACK_USER))
		return true;
	if (!take(words, &size) || size % sizeof(uint64_t) != 0)
		return false;
	if (size == 0)
		return true;
	data = (const uint8_t *)here(words);
	if (!skip(words, size / sizeof(uint64_t)) || !take(words, &dyn_size) || dyn_size > size)
		return false;
	sample->user_stack = data;
	sample->user_stack_size = dyn_size;
	return true;
}

/* Decodes the fields of a sample of an event with `attr` into `sample`,
 * whose other fields the caller has set. */
static bool parse_sample_fields(const struct perf_event_attr *attr,
				const struct perf_event_header *record, struct perf_sample *sample)
{
	struct words words = words_of(record);
	uint64_t type = attr->sample_type, value;

	if ((type & PERF_SAMPLE_IDENTIFIER) && !skip(&words, 1))
		return false;
	if ((type & PERF_SAMPLE_IP) && !take(&words, &sample->ip))
		return false;
	if (type & PERF_SAMPLE_TID) {
		if (!take(&words, &value))
			return false;
		sample->pid = (uint32_t)value; /* { u32 pid, tid; } little-endian */
		sample->tid = (uint32_t)(value >> 32);
	}
	if ((type & PERF_SAMPLE_TIME) && !take(&words, &sample->time))
		return false;
	if (!skip(&words, !!(type & PERF_SAMPLE_ADDR) + !!(type & PERF_SAMPLE_ID) +
			      !!(type & PERF_SAMPLE_STREAM_ID)))
		return false;
	if (type & PERF_SAMPLE_CPU) {
		if (!take(&words, &value))
			return false;
		sample->cpu = (uint32_t)value; /* { u32 cpu, reserved; } */
	}
	if ((type & PERF_SAMPLE_PERIOD) && !take(&words, &sample->period))
		return false;
	if ((type & PERF_SAMPLE_READ) && !skip_read_values(&words, attr->read_format))
		return false;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		if (!take(&words, &sample->callchain_length) ||
		    sample->callchain_length > words.count - words.next) {
			sample->callchain_length = 0;
			return false;
		}
		sample->callchain = here(&words);
		words.next += sample->callchain_length;
	}
	return parse_user_stack(&words, attr, sample);
}

bool perf_data_reader_parse_sample(const struct perf_data_reader *reader,
				   const struct perf_event_header *record,
				   struct perf_sample *sample)
{
	long event = record->type == PERF_RECORD_SAMPLE ? event_of_sample(reader, record) : -1;

	memset(sample, 0, sizeof(*sample));
	if (event < 0)
		return false;
	sample->event = (size_t)event;
	return parse_sample_fields(&reader->events[event].attr, record, sample);
}

bool perf_sample_parse_with_stack(const struct perf_event_attr *attr,
				  const struct perf_event_header *record,
				  struct perf_sample *sample)
{
	uint64_t copied;

	memset(sample, 0, sizeof(*sample));
	/* Without stack copies (fp mode) no record is decoded. */
	if (!attr->sample_stack_user || record->type != PERF_RECORD_SAMPLE ||
	    !parse_sample_fields(attr, record, sample) || !sample->user_stack)
		return false;
	/* Only a copy of the attr's size that ends the record: a record of
	 * another event never passes for one. */
	memcpy(&copied, sample->user_stack - sizeof(copied), sizeof(copied));
	return copied == attr->sample_stack_user &&
	       sample->user_stack + copied + sizeof(uint64_t) ==
		   (const uint8_t *)record + record->size;
}

size_t perf_sample_trim_user_stack(const struct perf_event_header *record,
				   const struct perf_sample *sample, uint64_t keep, void *out)
{
	const uint8_t *bytes = (const uint8_t *)record;
	const uint8_t *size_word = sample->user_stack - sizeof(uint64_t);
	uint64_t copied, filled = sample->user_stack_size < keep ? sample->user_stack_size : keep;
	uint64_t kept = (filled + 7) & ~(uint64_t)7;
	uint8_t *to = out;

	memcpy(&copied, size_word, sizeof(copied));
	if (kept >= copied)
		return 0;
	/* { u64 size; char data[size]; u64 dyn_size; } becomes { u64 kept;
	 * char data[kept]; u64 filled; }, or { u64 0; } when nothing is
	 * kept. */
	memcpy(to, bytes, (size_t)(size_word - bytes));
	to += size_word - bytes;
	memcpy(to, &kept, sizeof(kept));
	to += sizeof(kept);
	if (kept) {
		memcpy(to, sample->user_stack, (size_t)kept);
		to += kept;
		memcpy(to, &filled, sizeof(filled));
		to += sizeof(filled);
	}
	((struct perf_event_header *)out)->size = (uint16_t)(to - (uint8_t *)out);
	return (size_t)(to - (uint8_t *)out);
}

size_t perf_sample_with_user_frames(const struct perf_event_header *record,
				    const struct perf_sample *sample, const uint64_t *frames,
				    size_t count, void *out)
{
	const uint8_t *bytes = (const uint8_t *)record;
	const uint8_t *after_chain =
	    (const uint8_t *)(sample->callchain + sample->callchain_length);
	/* What is kept after the callchain ends before the registers (their
	 * ABI word), or before the copy's size when there are none. */
	const uint8_t *kept_end = sample->user_registers
				      ? (const uint8_t *)sample->user_registers - sizeof(uint64_t)
				      : sample->user_stack - sizeof(uint64_t);
	uint64_t kernel_part = 0, length, none = 0;
	size_t size;
	uint8_t *to = out;

	while (kernel_part < sample->callchain_length &&
	       sample->callchain[kernel_part] != PERF_CONTEXT_USER)
		kernel_part++;
	length = kernel_part + 1 + count;
	size = (size_t)((const uint8_t *)sample->callchain - bytes) + length * sizeof(uint64_t) +
	       (size_t)(kept_end - after_chain) + (sample->user_registers ? sizeof(none) : 0) +
	       sizeof(none);
	if (size > UINT16_MAX)
		return 0;
	/* The fields before the callchain and its length; the kernel's part
	 * of it and the user marker; the frames; the fields after it up to the
	 * registers (a switch's raw fields); no registers (ABI none: no walk
	 * starts from them); an empty copy. */
	memcpy(to, bytes, (size_t)((const uint8_t *)sample->callchain - bytes) - sizeof(length));
	to += (const uint8_t *)sample->callchain - bytes - sizeof(length);
	memcpy(to, &length, sizeof(length));
	to += sizeof(length);
	memcpy(to, sample->callchain, kernel_part * sizeof(uint64_t));
	to += kernel_part * sizeof(uint64_t);
	memcpy(to, &(uint64_t){PERF_CONTEXT_USER}, sizeof(uint64_t));
	to += sizeof(uint64_t);
	memcpy(to, frames, count * sizeof(*frames));
	to += count * sizeof(*frames);
	memcpy(to, after_chain, (size_t)(kept_end - after_chain));
	to += kept_end - after_chain;
	if (sample->user_registers) {
		memcpy(to, &none, sizeof(none));
		to += sizeof(none);
	}
	memcpy(to, &none, sizeof(none));
	((struct perf_event_header *)out)->size = (uint16_t)size;
	return size;
}

/* Puts `words` at the sample_id trailer of a non-sample record (its last
 * words: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, those the attr has)
 * and returns its event's sample_type, or 0 when it has no trailer. */
static uint64_t find_trailer(const struct perf_data_reader *reader,
			     const struct perf_event_header *record, struct words *words)
{
	const struct perf_event_attr *attr;
	size_t trailer;
	long event;

	if (record->type >= PERF_RECORD_USER_TYPE_START ||
	    (event = event_of_trailer(reader, record)) < 0)
		return 0;
	attr = &reader->events[event].attr;
	trailer = perf_record_trailer_words(attr);
	if (!trailer || trailer > words->count)
		return 0;
	words->next = words->count - trailer;
	return attr->sample_type;
}

bool perf_data_reader_record_time(const struct perf_data_reader *reader,
				  const struct perf_event_header *record, uint64_t *time)
{
	struct perf_sample sample;
	struct words words = words_of(record);
	uint64_t type;

	if (record->type == PERF_RECORD_SAMPLE) {
		if (!perf_data_reader_parse_sample(reader, record, &sample) ||
		    !(reader->events[sample.event].attr.sample_type & PERF_SAMPLE_TIME))
			return false;
		*time = sample.time;
		return true;
	}
	type = find_trailer(reader, record, &words);
	if (!(type & PERF_SAMPLE_TIME))
		return false;
	if (type & PERF_SAMPLE_TID)
		words.next++;
	return take(&words, time);
}

bool perf_data_reader_record_thread(const struct perf_data_reader *reader,
				    const struct perf_event_header *record, uint32_t *pid,
				    uint32_t *tid)
{
	struct words words = words_of(record);
	uint64_t value;

	if (!(find_trailer(reader, record, &words) & PERF_SAMPLE_TID) || !take(&words, &value))
		return false;
	*pid = (uint32_t)value;
	*tid = (uint32_t)(value >> 32);
	return true;
}

bool perf_data_reader_record_cpu(const struct perf_data_reader *reader,
				 const struct perf_event_header *record, uint32_t *cpu)
{
	struct words words = words_of(record);
	uint64_t type = find_trailer(reader, record, &words), value;

	/* sample_id: pid/tid, time, id, stream_id, cpu/res, identifier. */
	if (!(type & PERF_SAMPLE_CPU) ||
	    !skip(&words, !!(type & PERF_SAMPLE_TID) + !!(type & PERF_SAMPLE_TIME) +
			      !!(type & PERF_SAMPLE_ID) + !!(type & PERF_SAMPLE_STREAM_ID)) ||
	    !take(&words, &value))
		return false;
	*cpu = (uint32_t)value;
	return true;
}

uint64_t perf_sample_user_registers(const struct perf_sample *sample, uint64_t values[64])
{
	const uint64_t *next = sample->user_registers;

	if (!next)
		return 0;
	/* In bit order, one word each. */
	for (uint64_t left = sample->user_register_mask; left; left &= left - 1)
		values[__builtin_ctzll(left)] = *next++;
	return sample->user_register_mask;
}
