/* A helper for tests/perf_data_real_perf.sh:
 *
 *   perf_data_tool write FILE [compress] [SAMPLES]
 *	writes a capture of this very process with profcpu's writer: a COMM
 *	record, the kernel's MMAP as perf record synthesizes it (when
 *	/proc/kallsyms shows addresses), a MMAP2 record of this executable's
 *	code and SAMPLES samples
 *	(default 100) whose callchains point into
 *	perf_data_tool_known_function.
 *   perf_data_tool summary FILE
 *	reads FILE with profcpu's reader and prints what it holds, one fact a
 *	line ("samples: N", "comm: PID TID NAME", "mmap: PID START FILENAME",
 *	"sample: TID CPU TIME DEPTH COPY", COPY the bytes of its user stack copy).
 */
#include "perf_data.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COMM_NAME	 "pdtool-comm"
#define SAMPLE_CPU_COUNT 2
#define SAMPLE_PERIOD	 10101010 /* ns between samples at 99 Hz */

/* The function the written samples are in: perf must name it. */
__attribute__((noinline, used)) int perf_data_tool_known_function(int value)
{
	/* Keep a body of some size, so that an IP inside it is not its start. */
	for (int i = 0; i < 3; i++)
		value = value * 31 + i;
	return value;
}

struct code_mapping {
	uint64_t start, end, offset, inode;
	uint32_t major, minor;
	char path[4096];
};

/* The line of /proc/self/maps that holds `address`. */
static int find_mapping(uint64_t address, struct code_mapping *mapping)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4400];
	int found = -1;

	if (!maps)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), maps)) {
		char permissions[5];

		mapping->path[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %4095s",
			   &mapping->start, &mapping->end, permissions, &mapping->offset,
			   &mapping->major, &mapping->minor, &mapping->inode, mapping->path) >= 7 &&
		    address >= mapping->start && address < mapping->end)
			found = 0;
	}
	fclose(maps);
	return found;
}

/* The sample_id trailer of profcpu's sample_type: TID, TIME, CPU. */
struct trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
};

static void add(struct perf_data_writer *writer, const void *record)
{
	if (perf_data_writer_add(writer, record) < 0) {
		perror("perf_data_writer_add");
		exit(1);
	}
}

static void add_comm(struct perf_data_writer *writer, uint32_t pid, uint64_t time)
{
	struct {
		struct perf_record_comm comm;
		char name[16];
		struct trailer trailer;
	} record = {
	    .comm = {{PERF_RECORD_COMM, PERF_RECORD_MISC_USER, sizeof(record)}, pid, pid},
	    .name = COMM_NAME,
	    .trailer = {pid, pid, time, 0, 0},
	};

	add(writer, &record);
}

static void add_mmap(struct perf_data_writer *writer, uint32_t pid, uint64_t time,
		     const struct code_mapping *mapping)
{
	size_t name_size = (strlen(mapping->path) + 1 + 7) / 8 * 8;
	size_t size = sizeof(struct perf_record_mmap2) + name_size + sizeof(struct trailer);
	struct perf_record_mmap2 *record = calloc(1, size);
	struct trailer trailer = {pid, pid, time, 0, 0};

	*record = (struct perf_record_mmap2){
	    .header = {PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, (uint16_t)size},
	    .pid = pid,
	    .tid = pid,
	    .address = mapping->start,
	    .length = mapping->end - mapping->start,
	    .page_offset = mapping->offset,
	    .major = mapping->major,
	    .minor = mapping->minor,
	    .inode = mapping->inode,
	    .protection = 5, /* PROT_READ | PROT_EXEC */
	    .flags = 2,	     /* MAP_PRIVATE */
	};
	strcpy(record->filename, mapping->path);
	memcpy(record->filename + name_size, &trailer, sizeof(trailer));
	add(writer, record);
	free(record);
}

/* perf report warns that kernel maps are restricted unless the capture
 * maps the kernel's text as "[kernel.kallsyms]_text", page offset _text. */
static void add_kernel_mmap(struct perf_data_writer *writer, uint64_t time)
{
	FILE *symbols = fopen("/proc/kallsyms", "r");
	uint64_t address, text = 0, text_end = 0;
	char type, name[256];
	struct {
		struct perf_record_mmap mmap;
		char filename[24];
		struct trailer trailer;
	} record = {
	    .mmap = {{PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, sizeof(record)}, UINT32_MAX, 0},
	    .filename = "[kernel.kallsyms]_text",
	    .trailer = {UINT32_MAX, 0, time, 0, 0},
	};

	while (symbols &&
	       fscanf(symbols, "%" SCNx64 " %c %255s%*[^\n]", &address, &type, name) == 3) {
		if (!strcmp(name, "_text"))
			text = address;
		else if (!strcmp(name, "_etext"))
			text_end = address;
	}
	if (symbols)
		fclose(symbols);
	if (!text || text_end <= text)
		return;
	record.mmap.address = record.mmap.page_offset = text;
	record.mmap.length = text_end - text;
	add(writer, &record);
}

static void add_sample(struct perf_data_writer *writer, uint32_t pid, uint64_t time, uint32_t cpu,
		       uint64_t known_ip)
{
	/* Fields in sample_type order: IP, TID, TIME, CPU, PERIOD, CALLCHAIN,
	 * STACK_USER (nothing copied). */
	struct {
		struct perf_event_header header;
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, reserved;
		uint64_t period;
		uint64_t callchain_length;
		uint64_t callchain[2];
		uint64_t stack_size;
	} record = {
	    .header = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(record)},
	    .ip = known_ip,
	    .pid = pid,
	    .tid = pid,
	    .time = time,
	    .cpu = cpu,
	    .period = SAMPLE_PERIOD,
	    .callchain_length = 2,
	    .callchain = {PERF_CONTEXT_USER, known_ip},
	};

	add(writer, &record);
}

static int write_capture(const char *path, bool compress, int sample_count)
{
	uint64_t known_ip = (uint64_t)(uintptr_t)&perf_data_tool_known_function + 4;
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_period = SAMPLE_PERIOD,
	    .sample_type = PROFCPU_SAMPLE_TYPE,
	    .mmap = 1,
	    .comm = 1,
	    .task = 1,
	    .mmap2 = 1,
	    .sample_id_all = 1,
	    .use_clockid = 1,
	    .clockid = CLOCK_MONOTONIC,
	};
	struct perf_data_info info = {.event_name = "cpu-clock",
				      .command_line = "perf_data_tool write"};
	struct perf_event_header finished_round = {PERF_RECORD_FINISHED_ROUND, 0,
						   sizeof(finished_round)};
	struct code_mapping mapping;
	struct perf_data_writer *writer;
	uint32_t pid = (uint32_t)getpid();
	uint64_t time = 1000000000000ULL;

	if (find_mapping(known_ip, &mapping) < 0 || mapping.path[0] != '/') {
		fprintf(stderr, "perf_data_tool: cannot find the mapping of its own code\n");
		return 1;
	}
	writer = perf_data_writer_create(path, &attr, &info, compress);
	if (!writer) {
		perror(path);
		return 1;
	}
	add_comm(writer, pid, time);
	add_kernel_mmap(writer, time);
	add_mmap(writer, pid, time, &mapping);
	for (int i = 0; i < sample_count; i++)
		add_sample(writer, pid, time + (uint64_t)(i + 1) * SAMPLE_PERIOD,
			   (uint32_t)(i % SAMPLE_CPU_COUNT), known_ip);
	add(writer, &finished_round);
	if (perf_data_writer_finish(writer) < 0) {
		perror(path);
		return 1;
	}
	return 0;
}

struct summary {
	const struct perf_data_reader *reader;
	size_t samples, records, timed_records;
};

static int print_record(const struct perf_event_header *record, void *context)
{
	struct summary *summary = context;
	struct perf_sample sample;
	uint64_t time;

	summary->records++;
	summary->timed_records += perf_data_reader_record_time(summary->reader, record, &time);
	if (record->type == PERF_RECORD_SAMPLE) {
		if (!perf_data_reader_parse_sample(summary->reader, record, &sample)) {
			fprintf(stderr, "perf_data_tool: malformed sample\n");
			return -1;
		}
		summary->samples++;
		printf("sample: %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", sample.tid,
		       sample.cpu, sample.time, sample.callchain_length, sample.user_stack_size);
	} else if (record->type == PERF_RECORD_COMM) {
		const struct perf_record_comm *comm = (const void *)record;

		printf("comm: %u %u %.*s\n", comm->pid, comm->tid,
		       (int)(record->size - sizeof(*comm)), comm->comm);
	} else if (record->type == PERF_RECORD_MMAP2) {
		const struct perf_record_mmap2 *mmap = (const void *)record;

		printf("mmap: %u %#" PRIx64 " %.*s\n", mmap->pid, mmap->address,
		       (int)(record->size - sizeof(*mmap)), mmap->filename);
	}
	return 0;
}

static int summarize(const char *path)
{
	char error[256];
	struct perf_data_reader *reader = perf_data_reader_open(path, error, sizeof(error));
	struct summary summary = {reader, 0, 0, 0};
	int result;

	if (!reader) {
		fprintf(stderr, "perf_data_tool: %s\n", error);
		return 1;
	}
	printf("events: %zu\n", perf_data_reader_event_count(reader));
	for (size_t i = 0; i < perf_data_reader_event_count(reader); i++)
		printf("event: %s\n", perf_data_reader_event_name(reader, i));
	result = perf_data_reader_for_each(reader, print_record, &summary, error, sizeof(error));
	if (result == -1 && error[0])
		fprintf(stderr, "perf_data_tool: %s\n", error);
	printf("samples: %zu\nrecords: %zu\ntimed records: %zu\n", summary.samples, summary.records,
	       summary.timed_records);
	perf_data_reader_close(reader);
	return result ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "write"))
		return write_capture(argv[2], argc >= 4 && !strcmp(argv[3], "compress"),
				     argc >= 5 ? atoi(argv[4]) : 100);
	if (argc == 3 && !strcmp(argv[1], "summary"))
		return summarize(argv[2]);
	fprintf(stderr, "usage: perf_data_tool write FILE [compress|plain] [SAMPLES]\n"
			"       perf_data_tool summary FILE\n");
	return 2;
}
