/* The perf.data writer and reader: round trips, every sample field in
 * sample_type order, and files that are cut short, corrupt or unfinished. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "perf_data.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PERIOD	   10101010
#define BASE_TIME  5000000000ULL
#define CODE_START 0x400000ULL
#define STACK_WORD 0x7ffd0000ULL
/* Where the stack copy starts in test_sample_fields_follow_sample_type_order. */
#define STACK_DATA 30

/* Records back to back, as given to the writer. */
struct records {
	uint8_t *bytes;
	size_t size, capacity, count;
};

static void append_record(struct records *records, const void *record)
{
	size_t size = ((const struct perf_event_header *)record)->size;

	while (records->size + size > records->capacity) {
		records->capacity = records->capacity ? records->capacity * 2 : 4096;
		records->bytes = realloc(records->bytes, records->capacity);
		assert_non_null(records->bytes);
	}
	memcpy(records->bytes + records->size, record, size);
	records->size += size;
	records->count++;
}

/* The sample_id trailer of PROFCPU_SAMPLE_TYPE: TID, TIME, CPU. */
struct trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
};

static void add_sample(struct records *records, uint32_t tid, uint64_t time, uint32_t cpu,
		       size_t depth)
{
	size_t words = 9 + depth;
	uint64_t *body = calloc(1 + words, sizeof(uint64_t));
	struct perf_event_header *header = (struct perf_event_header *)body;

	*header = (struct perf_event_header){PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
					     (uint16_t)((1 + words) * sizeof(uint64_t))};
	body[1] = CODE_START + tid;	      /* IP */
	body[2] = (uint64_t)tid << 32 | 1000; /* pid 1000, tid */
	body[3] = time;			      /* TIME */
	body[4] = cpu;			      /* CPU */
	body[5] = PERIOD;		      /* PERIOD */
	body[6] = depth;		      /* CALLCHAIN length */
	for (size_t i = 0; i < depth; i++)
		body[7 + i] = CODE_START + time % 4096 + i;
	body[7 + depth] = sizeof(uint64_t); /* STACK_USER: one word, all of it copied */
	body[8 + depth] = STACK_WORD + tid;
	body[9 + depth] = sizeof(uint64_t);
	append_record(records, body);
	free(body);
}

static void add_comm(struct records *records, uint32_t tid, const char *name, uint64_t time)
{
	struct {
		struct perf_record_comm comm;
		char name[16];
		struct trailer trailer;
	} record = {
	    .comm = {{PERF_RECORD_COMM, 0, sizeof(record)}, 1000, tid},
	    .trailer = {1000, tid, time, 1, 0},
	};

	strncpy(record.name, name, sizeof(record.name) - 1);
	append_record(records, &record);
}

static void add_mmap2(struct records *records, uint64_t time)
{
	struct {
		struct perf_record_mmap2 mmap;
		char filename[16];
		struct trailer trailer;
	} record = {
	    .mmap = {.header = {PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(record)},
		     .pid = 1000,
		     .tid = 1000,
		     .address = CODE_START,
		     .length = 0x10000,
		     .inode = 42},
	    .filename = "/usr/bin/app",
	    .trailer = {1000, 1000, time, 0, 0},
	};

	append_record(records, &record);
}

static void add_task(struct records *records, uint32_t type, uint32_t tid, uint64_t time)
{
	struct {
		struct perf_record_task task;
		struct trailer trailer;
	} record = {
	    .task = {{type, 0, sizeof(record)}, 1000, 1000, tid, 1000, time},
	    .trailer = {1000, tid, time, 0, 0},
	};

	append_record(records, &record);
}

static void add_lost(struct records *records, uint64_t time)
{
	struct {
		struct perf_record_lost lost;
		struct trailer trailer;
	} record = {
	    .lost = {{PERF_RECORD_LOST, 0, sizeof(record)}, 7, 3},
	    .trailer = {0, 0, time, 1, 0},
	};

	append_record(records, &record);
}

static void add_finished_round(struct records *records)
{
	struct perf_event_header record = {PERF_RECORD_FINISHED_ROUND, 0, sizeof(record)};

	append_record(records, &record);
}

/* What a profcpu capture holds: a thread's life with samples in it. */
static struct records typical_records(size_t sample_count, size_t depth)
{
	struct records records = {0};

	add_comm(&records, 1000, "dotnet", BASE_TIME);
	add_mmap2(&records, BASE_TIME + 1);
	add_task(&records, PERF_RECORD_FORK, 1001, BASE_TIME + 2);
	add_comm(&records, 1001, ".NET TP Worker", BASE_TIME + 3);
	for (size_t i = 0; i < sample_count; i++)
		add_sample(&records, 1000 + (uint32_t)(i % 2), BASE_TIME + 10 + i * PERIOD,
			   (uint32_t)(i % 2), depth);
	add_lost(&records, BASE_TIME + 10 + sample_count * PERIOD);
	add_finished_round(&records);
	add_task(&records, PERF_RECORD_EXIT, 1001, BASE_TIME + 20 + sample_count * PERIOD);
	return records;
}

static struct perf_event_attr profcpu_attr(void)
{
	return (struct perf_event_attr){
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_freq = 99,
	    .freq = 1,
	    .sample_type = PROFCPU_SAMPLE_TYPE,
	    .mmap = 1,
	    .comm = 1,
	    .task = 1,
	    .mmap2 = 1,
	    .sample_id_all = 1,
	};
}

static char *temporary_path(void)
{
	char *path = strdup("/tmp/profcpu-perf-data-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	return path;
}

static void write_records(const char *path, const struct perf_event_attr *attr,
			  const struct records *records, bool compress)
{
	struct perf_data_info info = {.event_name = "cpu-clock", .command_line = "profcpu test"};
	struct perf_data_writer *writer = perf_data_writer_create(path, attr, &info, compress);

	assert_non_null(writer);
	for (size_t position = 0; position < records->size;) {
		const struct perf_event_header *record = (const void *)(records->bytes + position);

		assert_int_equal(perf_data_writer_add(writer, record), 0);
		position += record->size;
	}
	assert_int_equal(perf_data_writer_finish(writer), 0);
}

static int collect(const struct perf_event_header *record, void *context)
{
	assert_int_equal((uintptr_t)record % 8, 0);
	append_record(context, record);
	return 0;
}

/* Reads all of `path`; returns -1 (with `error` set) if the reader fails. */
static int read_records(const char *path, struct records *read, char *error, size_t error_size)
{
	struct perf_data_reader *reader = perf_data_reader_open(path, error, error_size);
	int result;

	if (!reader)
		return -1;
	result = perf_data_reader_for_each(reader, collect, read, error, error_size);
	perf_data_reader_close(reader);
	return result;
}

static void assert_reads_back(const char *path, const struct records *written)
{
	struct records read = {0};
	char error[256] = "";

	assert_int_equal(read_records(path, &read, error, sizeof(error)), 0);
	assert_int_equal(read.count, written->count);
	assert_int_equal(read.size, written->size);
	assert_memory_equal(read.bytes, written->bytes, written->size);
	free(read.bytes);
}

static off_t file_size(const char *path)
{
	struct stat status;

	assert_int_equal(stat(path, &status), 0);
	return status.st_size;
}

struct sample_checks {
	const struct perf_data_reader *reader;
	size_t samples, timed;
	uint64_t last_time;
};

static int check_record(const struct perf_event_header *record, void *context)
{
	struct sample_checks *checks = context;
	struct perf_sample sample;
	uint64_t time, word;

	if (perf_data_reader_record_time(checks->reader, record, &time)) {
		assert_true(time >= checks->last_time);
		checks->last_time = time;
		checks->timed++;
	}
	if (record->type != PERF_RECORD_SAMPLE)
		return 0;
	assert_true(perf_data_reader_parse_sample(checks->reader, record, &sample));
	assert_int_equal(sample.event, 0);
	assert_int_equal(sample.pid, 1000);
	assert_int_equal(sample.tid, 1000 + checks->samples % 2);
	assert_int_equal(sample.cpu, checks->samples % 2);
	assert_int_equal(sample.time, BASE_TIME + 10 + checks->samples * PERIOD);
	assert_int_equal(sample.ip, CODE_START + sample.tid);
	assert_int_equal(sample.period, PERIOD);
	assert_int_equal(sample.callchain_length, 3);
	assert_int_equal(sample.callchain[2], CODE_START + sample.time % 4096 + 2);
	assert_int_equal(sample.user_stack_size, sizeof(uint64_t));
	memcpy(&word, sample.user_stack, sizeof(word));
	assert_int_equal(word, STACK_WORD + sample.tid);
	checks->samples++;
	return 0;
}

static void test_plain_round_trip(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(50, 3);
	char *path = temporary_path();
	char error[256] = "";
	struct perf_data_reader *reader;
	struct sample_checks checks = {0};

	(void)state;
	write_records(path, &attr, &records, false);
	assert_reads_back(path, &records);

	reader = perf_data_reader_open(path, error, sizeof(error));
	assert_non_null(reader);
	assert_int_equal(perf_data_reader_event_count(reader), 1);
	assert_string_equal(perf_data_reader_event_name(reader, 0), "cpu-clock");
	assert_int_equal(perf_data_reader_attr(reader, 0)->sample_type, PROFCPU_SAMPLE_TYPE);
	assert_int_equal(perf_data_reader_attr(reader, 0)->sample_freq, 99);
	assert_true(perf_data_reader_attr(reader, 0)->sample_id_all);
	checks.reader = reader;
	assert_int_equal(
	    perf_data_reader_for_each(reader, check_record, &checks, error, sizeof(error)), 0);
	assert_int_equal(checks.samples, 50);
	/* All but PERF_RECORD_FINISHED_ROUND carry a time. */
	assert_int_equal(checks.timed, records.count - 1);
	perf_data_reader_close(reader);
	unlink(path);
	free(path);
	free(records.bytes);
}

static int stop_at_third(const struct perf_event_header *record, void *context)
{
	(void)record;
	return ++*(int *)context == 3 ? 7 : 0;
}

static void test_visit_stops_when_asked(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(10, 1);
	char *path = temporary_path();
	char error[256];
	struct perf_data_reader *reader;
	int visited = 0;

	(void)state;
	write_records(path, &attr, &records, true);
	reader = perf_data_reader_open(path, error, sizeof(error));
	assert_non_null(reader);
	assert_int_equal(
	    perf_data_reader_for_each(reader, stop_at_third, &visited, error, sizeof(error)), 7);
	assert_int_equal(visited, 3);
	/* A second walk starts over, compressed stream included. */
	visited = -100;
	assert_int_equal(
	    perf_data_reader_for_each(reader, stop_at_third, &visited, error, sizeof(error)), 0);
	assert_int_equal(visited, -100 + (int)records.count);
	perf_data_reader_close(reader);
	unlink(path);
	free(path);
	free(records.bytes);
}

static void test_compressed_round_trip(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(20000, 5);
	char *path = temporary_path();

	(void)state;
	/* A record larger than one compression chunk spans two. */
	add_sample(&records, 1000, BASE_TIME + 30000 * (uint64_t)PERIOD, 0, 8000);
	write_records(path, &attr, &records, true);
	assert_true(file_size(path) < (off_t)records.size / 4);
	assert_reads_back(path, &records);
	unlink(path);
	free(path);
	free(records.bytes);
}

/* 40 MB of records: the writer ends its zstd frame each time its history
 * fills and starts the next, which the reader follows (as perf's does:
 * tests/perf_data_real_perf.sh). */
static void test_compressed_stream_of_many_frames(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(5000, 1000);
	char *path = temporary_path();

	(void)state;
	assert_true(records.size > 40000000);
	write_records(path, &attr, &records, true);
	assert_reads_back(path, &records);
	unlink(path);
	free(path);
	free(records.bytes);
}

static void test_sample_fields_follow_sample_type_order(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	uint64_t sample[] = {
	    0,			     /* header */
	    77,			     /* IDENTIFIER */
	    0x1234,		     /* IP */
	    (uint64_t)12 << 32 | 11, /* pid 11, tid 12 */
	    999,		     /* TIME */
	    0xdead,		     /* ADDR */
	    77,			     /* ID */
	    78,			     /* STREAM_ID */
	    1,			     /* CPU */
	    4000,		     /* PERIOD */
	    2,
	    5,
	    100,
	    77,
	    200,
	    79, /* READ: group of 2, enabled, {value, id} */
	    2,
	    PERF_CONTEXT_USER,
	    0x1234, /* CALLCHAIN */
	    (uint64_t)0x61616161 << 32 | 12,
	    0x6161616161616161, /* RAW: 12 bytes */
	    1,
	    5,
	    0x100,
	    0x200,
	    0, /* BRANCH_STACK: 1 entry, hw_idx */
	    PERF_SAMPLE_REGS_ABI_64,
	    0x7ff0,
	    0x7ff8, /* REGS_USER: sp, ip */
	    16,
	    0x5555,
	    0x6666,
	    12, /* STACK_USER: 16 bytes, 12 copied */
	};
	uint64_t comm[] = {
	    0,
	    (uint64_t)12 << 32 | 11,
	    0x6d6f63, /* pid, tid, "com" */
	    (uint64_t)12 << 32 | 11,
	    555,
	    77,
	    78,
	    1,
	    77 /* TID TIME ID STREAM_ID CPU IDENTIFIER */
	};
	struct perf_event_header *header = (void *)sample, *comm_header = (void *)comm;
	struct records records = {0};
	char *path = temporary_path();
	char error[256];
	struct perf_data_reader *reader;
	struct perf_sample parsed;
	uint64_t time;

	(void)state;
	attr.sample_type =
	    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
	    PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
	attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	attr.sample_regs_user = 1ULL << 7 | 1ULL << 8; /* two registers: any machine's */
	attr.sample_stack_user = 16;
	*header = (struct perf_event_header){PERF_RECORD_SAMPLE, 0, sizeof(sample)};
	*comm_header = (struct perf_event_header){PERF_RECORD_COMM, 0, sizeof(comm)};
	append_record(&records, sample);
	append_record(&records, comm);
	write_records(path, &attr, &records, false);
	reader = perf_data_reader_open(path, error, sizeof(error));
	assert_non_null(reader);

	assert_true(perf_data_reader_parse_sample(reader, header, &parsed));
	assert_int_equal(parsed.ip, 0x1234);
	assert_int_equal(parsed.pid, 11);
	assert_int_equal(parsed.tid, 12);
	assert_int_equal(parsed.time, 999);
	assert_int_equal(parsed.cpu, 1);
	assert_int_equal(parsed.period, 4000);
	assert_int_equal(parsed.callchain_length, 2);
	assert_int_equal(parsed.callchain[1], 0x1234);
	assert_int_equal(parsed.user_stack_size, 12);
	assert_memory_equal(parsed.user_stack, &sample[STACK_DATA], 12);
	assert_true(perf_data_reader_record_time(reader, comm_header, &time));
	assert_int_equal(time, 555);
	assert_false(perf_data_reader_parse_sample(reader, comm_header, &parsed));

	/* Cut short anywhere, the sample is malformed, not misread. */
	for (uint16_t size = sizeof(*header); size < sizeof(sample); size += 8) {
		header->size = size;
		assert_false(perf_data_reader_parse_sample(reader, header, &parsed));
	}
	/* A group read that claims more values than the record holds. */
	header->size = sizeof(sample);
	sample[10] = UINT64_MAX / 2;
	assert_false(perf_data_reader_parse_sample(reader, header, &parsed));
	sample[10] = 2;
	assert_true(perf_data_reader_parse_sample(reader, header, &parsed));
	/* A stack copy that claims more than its size, or a size past the
	 * record, or one that is no whole number of words. */
	sample[STACK_DATA + 2] = 17;
	assert_false(perf_data_reader_parse_sample(reader, header, &parsed));
	sample[STACK_DATA + 2] = 12;
	for (uint64_t size = 17; size < 48; size += 15) {
		sample[STACK_DATA - 1] = size;
		assert_false(perf_data_reader_parse_sample(reader, header, &parsed));
	}
	sample[STACK_DATA - 1] = UINT64_MAX - 7;
	assert_false(perf_data_reader_parse_sample(reader, header, &parsed));
	sample[STACK_DATA - 1] = 16;
	assert_true(perf_data_reader_parse_sample(reader, header, &parsed));
	/* A branch stack longer than the record. */
	sample[STACK_DATA - 9] = UINT64_MAX / 3;
	assert_false(perf_data_reader_parse_sample(reader, header, &parsed));
	comm_header->size = 3 * sizeof(uint64_t);
	assert_false(perf_data_reader_record_time(reader, comm_header, &time));

	perf_data_reader_close(reader);
	unlink(path);
	free(path);
	free(records.bytes);
}

/* perf_sample_trim_user_stack() of `record` when it parses as a sample of
 * `attr` with its stack copy; 0 when it does not. */
static size_t trim(const struct perf_event_attr *attr, const struct perf_event_header *record,
		   uint64_t keep, void *out)
{
	struct perf_sample sample;

	if (!perf_sample_parse_with_stack(attr, record, &sample))
		return 0;
	return perf_sample_trim_user_stack(record, &sample, keep, out);
}

/* A stack copy the kernel filled only in part is cut to what it filled, or
 * to less when asked; the trimmed sample parses as the original did. */
static void test_trim_drops_unfilled_stack_bytes(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	uint64_t sample[] = {
	    0,			     /* header */
	    0x1234,		     /* IP */
	    (uint64_t)12 << 32 | 11, /* pid 11, tid 12 */
	    PERF_SAMPLE_REGS_ABI_64, /* REGS_USER */
	    0x7ff0,		     /* sp */
	    32,			     /* STACK_USER: 32 bytes */
	    0x5555,		     /* copied */
	    0x66,		     /* 1 byte copied, then stale */
	    0x7777,		     /* stale */
	    0x8888,		     /* stale */
	    9,			     /* 9 copied */
	};
	struct perf_event_header *header = (void *)sample;
	_Alignas(8) uint8_t trimmed[sizeof(sample)];
	struct perf_event_header *trimmed_header = (void *)trimmed;
	uint64_t words[9];

	(void)state;
	attr.sample_type =
	    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr.sample_regs_user = 1ULL << 7; /* one register: any machine's */
	attr.sample_stack_user = 32;
	*header = (struct perf_event_header){PERF_RECORD_SAMPLE, 0, sizeof(sample)};

	assert_int_equal(trim(&attr, header, UINT64_MAX, trimmed), 9 * sizeof(uint64_t));
	assert_int_equal(trimmed_header->size, 9 * sizeof(uint64_t));
	memcpy(words, trimmed, sizeof(words));
	assert_int_equal(words[1], 0x1234);
	assert_int_equal(words[4], 0x7ff0);
	assert_int_equal(words[5], 16); /* whole words: 9 bytes round up to 16 */
	assert_int_equal(words[6], 0x5555);
	assert_int_equal(words[7] & 0xff, 0x66);
	assert_int_equal(words[8], 9);
	assert_int_equal(trim(&attr, trimmed_header, UINT64_MAX, words), 0);

	/* What a walk needs: 5 bytes, kept as one whole word. */
	assert_int_equal(trim(&attr, header, 5, trimmed), 8 * sizeof(uint64_t));
	memcpy(words, trimmed, 8 * sizeof(uint64_t));
	assert_int_equal(words[5], 8);
	assert_int_equal(words[6], 0x5555);
	assert_int_equal(words[7], 5);

	/* Nothing copied: the copy becomes { 0 }. */
	sample[10] = 0;
	assert_int_equal(trim(&attr, header, UINT64_MAX, trimmed), 6 * sizeof(uint64_t));
	memcpy(words, trimmed, 6 * sizeof(uint64_t));
	assert_int_equal(words[5], 0);
	/* All of it copied, or a record that does not parse: nothing to do. */
	sample[10] = 32;
	assert_int_equal(trim(&attr, header, UINT64_MAX, trimmed), 0);
	sample[10] = 33;
	assert_int_equal(trim(&attr, header, UINT64_MAX, trimmed), 0);
	/* Another event's sample, whose copy has another size. */
	sample[10] = 9;
	attr.sample_stack_user = 64;
	assert_int_equal(trim(&attr, header, UINT64_MAX, trimmed), 0);
}

static void copy_prefix(const char *from, const char *to, off_t length)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_TRUNC);
	char *bytes = malloc((size_t)length + 1);

	assert_true(in >= 0 && out >= 0);
	assert_int_equal(read(in, bytes, (size_t)length), length);
	assert_int_equal(write(out, bytes, (size_t)length), length);
	free(bytes);
	close(in);
	close(out);
}

static uint64_t data_end(const char *path)
{
	uint64_t section[2];
	int fd = open(path, O_RDONLY);

	assert_int_equal(pread(fd, section, sizeof(section), 40), sizeof(section));
	close(fd);
	return section[0] + section[1];
}

static void test_truncated_file_is_an_error(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(30, 2);
	char *path = temporary_path(), *cut = temporary_path();
	off_t size;
	uint64_t end;

	(void)state;
	write_records(path, &attr, &records, false);
	size = file_size(path);
	end = data_end(path);
	for (off_t length = 0; length <= size; length++) {
		struct records read = {0};
		char error[256] = "";

		copy_prefix(path, cut, length);
		if ((uint64_t)length < end) {
			assert_int_equal(read_records(cut, &read, error, sizeof(error)), -1);
			assert_true(error[0]);
		} else {
			assert_int_equal(read_records(cut, &read, error, sizeof(error)), 0);
			assert_int_equal(read.count, records.count);
		}
		free(read.bytes);
	}
	unlink(path);
	unlink(cut);
	free(path);
	free(cut);
	free(records.bytes);
}

static void patch(const char *path, off_t offset, const void *bytes, size_t size)
{
	int fd = open(path, O_WRONLY);

	assert_int_equal(pwrite(fd, bytes, size, offset), (ssize_t)size);
	close(fd);
}

static void assert_open_fails(const char *path, const char *reason)
{
	char error[256] = "";

	assert_null(perf_data_reader_open(path, error, sizeof(error)));
	assert_non_null(strstr(error, reason));
}

static void test_corrupt_header_is_an_error(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(3, 1);
	char *path = temporary_path();
	uint64_t bad_sizes[] = {0, 8, 103, (uint64_t)1 << 40}, pipe_size = 16, zero = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		write_records(path, &attr, &records, false);
		patch(path, 8, &bad_sizes[i], sizeof(bad_sizes[i]));
		assert_open_fails(path, "header size");
	}
	write_records(path, &attr, &records, false);
	patch(path, 8, &pipe_size, sizeof(pipe_size));
	assert_open_fails(path, "pipe-mode");
	write_records(path, &attr, &records, false);
	patch(path, 16, &zero, sizeof(zero)); /* attr_size */
	assert_open_fails(path, "attr section");
	write_records(path, &attr, &records, false);
	patch(path, 0, "PERFILE3", 8);
	assert_open_fails(path, "not a perf.data file");
	unlink(path);
	free(path);
	free(records.bytes);
}

static void test_corrupt_record_size_is_an_error(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(3, 1), read = {0};
	char *path = temporary_path();
	uint64_t data_offset;
	uint16_t zero_size = 0;
	char error[256] = "";
	int fd;

	(void)state;
	write_records(path, &attr, &records, false);
	fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, &data_offset, sizeof(data_offset), 40), sizeof(data_offset));
	close(fd);
	/* The second record's header.size. */
	patch(path, (off_t)(data_offset + ((struct perf_event_header *)records.bytes)->size + 6),
	      &zero_size, sizeof(zero_size));
	assert_int_equal(read_records(path, &read, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "bad record size"));
	assert_int_equal(read.count, 1);
	unlink(path);
	free(path);
	free(read.bytes);
	free(records.bytes);
}

static int parse_everything(const struct perf_event_header *record, void *context)
{
	struct perf_sample sample;
	uint64_t time;

	perf_data_reader_parse_sample(context, record, &sample);
	for (uint64_t i = 0; i < sample.callchain_length; i++)
		time = sample.callchain[i];
	perf_data_reader_record_time(context, record, &time);
	return 0;
}

/* Every byte of the file flipped in turn: errors are fine, crashes (which
 * the sanitizers catch) are not. */
static void flip_every_byte(const struct records *records, bool compress)
{
	struct perf_event_attr attr = profcpu_attr();
	char *path = temporary_path();
	off_t size;

	write_records(path, &attr, records, compress);
	size = file_size(path);
	for (off_t offset = 0; offset < size; offset++) {
		unsigned char byte;
		char error[256];
		int fd = open(path, O_RDWR);
		struct perf_data_reader *reader;

		assert_int_equal(pread(fd, &byte, 1, offset), 1);
		byte ^= 0xa5;
		assert_int_equal(pwrite(fd, &byte, 1, offset), 1);
		reader = perf_data_reader_open(path, error, sizeof(error));
		if (reader) {
			perf_data_reader_for_each(reader, parse_everything, reader, error,
						  sizeof(error));
			perf_data_reader_close(reader);
		}
		byte ^= 0xa5;
		assert_int_equal(pwrite(fd, &byte, 1, offset), 1);
		close(fd);
	}
	unlink(path);
	free(path);
}

static void test_flipped_bytes_never_crash(void **state)
{
	struct records records = typical_records(40, 4);

	(void)state;
	flip_every_byte(&records, false);
	flip_every_byte(&records, true);
	free(records.bytes);
}

static void test_unfinished_recording_is_read_to_end_of_file(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = typical_records(20, 2), read = {0};
	char *path = temporary_path();
	uint64_t zero = 0, end;
	char error[256] = "";

	(void)state;
	write_records(path, &attr, &records, false);
	end = data_end(path);
	/* As a killed perf leaves it: no data size, no feature sections, and
	 * the last record cut short. */
	patch(path, 48, &zero, sizeof(zero));
	assert_int_equal(truncate(path, (off_t)end - 4), 0);
	assert_int_equal(read_records(path, &read, error, sizeof(error)), 0);
	assert_int_equal(read.count, records.count - 1);
	assert_memory_equal(read.bytes, records.bytes, read.size);
	unlink(path);
	free(path);
	free(read.bytes);
	free(records.bytes);
}

static void test_empty_capture(void **state)
{
	struct perf_event_attr attr = profcpu_attr();
	struct records records = {0}, read = {0};
	char *path = temporary_path();
	char error[256] = "";

	(void)state;
	for (int compress = 0; compress <= 1; compress++) {
		write_records(path, &attr, &records, compress);
		assert_int_equal(read_records(path, &read, error, sizeof(error)), 0);
		assert_int_equal(read.count, 0);
	}
	unlink(path);
	free(path);
}

/* In a child limited to `limit` bytes of file: writes samples until the
 * writer fails, and exits 0 if it failed as promised. */
static void write_until_full(const char *path, bool compress, rlim_t limit)
{
	struct perf_event_attr attr = profcpu_attr();
	struct rlimit file_limit = {limit, limit};
	struct perf_data_writer *writer;
	struct records one = {0};
	int result, ok, i = 0;

	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &file_limit);
	writer = perf_data_writer_create(path, &attr, NULL, compress);
	if (!writer)
		_exit(2);
	do {
		one.size = one.count = 0;
		add_sample(&one, 1000 + (uint32_t)(i % 2), BASE_TIME + 10 + (uint64_t)i * PERIOD,
			   (uint32_t)(i % 2), 3 + (size_t)i % 7);
		result = perf_data_writer_add(writer, (const void *)one.bytes);
	} while (result == 0 && ++i < 1000000);
	ok = result == -1 && errno == EFBIG;
	ok = ok && perf_data_writer_add(writer, (const void *)one.bytes) == -1 && errno == EFBIG;
	ok = perf_data_writer_finish(writer) == -1 && errno == EFBIG && ok;
	free(one.bytes);
	_exit(ok ? 0 : 3);
}

static void test_write_error_keeps_what_was_written(void **state)
{
	char *path = temporary_path();

	(void)state;
	for (int compress = 0; compress <= 1; compress++) {
		struct records read = {0};
		char error[256] = "";
		struct perf_data_reader *reader;
		int status;
		pid_t child = fork();

		if (child == 0)
			write_until_full(path, compress, 300000);
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_true(file_size(path) <= 300000);
		assert_int_equal(read_records(path, &read, error, sizeof(error)), 0);
		assert_true(read.count > 1000);
		reader = perf_data_reader_open(path, error, sizeof(error));
		assert_non_null(reader);
		assert_int_equal(perf_data_reader_for_each(reader, parse_everything, reader, error,
							   sizeof(error)),
				 0);
		perf_data_reader_close(reader);
		free(read.bytes);
	}
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_round_trip),
	    cmocka_unit_test(test_visit_stops_when_asked),
	    cmocka_unit_test(test_compressed_round_trip),
	    cmocka_unit_test(test_compressed_stream_of_many_frames),
	    cmocka_unit_test(test_sample_fields_follow_sample_type_order),
	    cmocka_unit_test(test_trim_drops_unfilled_stack_bytes),
	    cmocka_unit_test(test_truncated_file_is_an_error),
	    cmocka_unit_test(test_corrupt_header_is_an_error),
	    cmocka_unit_test(test_corrupt_record_size_is_an_error),
	    cmocka_unit_test(test_flipped_bytes_never_crash),
	    cmocka_unit_test(test_unfinished_recording_is_read_to_end_of_file),
	    cmocka_unit_test(test_empty_capture),
	    cmocka_unit_test(test_write_error_keeps_what_was_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
