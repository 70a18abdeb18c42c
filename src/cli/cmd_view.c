/* profcpu view: a perfcollect trace (NAME.trace.zip, ours or perfcollect's)
 * summarized in the terminal: top functions by self and total samples, and
 * the heaviest stacks, named as PerfView names them (module!function). */
#include "commands.h"
#include "options.h"
#include "perf_script_read.h"
#include "runtime_profiles_view.h"
#include "runtime_trace.h"
#include "string_table.h"
#include "util.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char usage[] =
    "usage: profcpu view NAME.trace.zip [options]\n"
    "       perfcollect view NAME.trace.zip [options]\n"
    "\n"
    "Prints a summary of a perfcollect trace (made by profcpu or perfcollect):\n"
    "the processes, the functions with the most samples of their own (self)\n"
    "and under them (total), and the heaviest call stacks. Reads the trace's\n"
    "perf.data.txt as PerfView does; also takes a bare *.data.txt file. When\n"
    "the trace holds the .NET runtime's events (runtime.nettrace), also what\n"
    "they say: GCs and their pauses, exceptions, lock contention, JIT; and\n"
    "where threads waited for locks, threw and allocated, from the profiles of\n"
    "those events (contention_, exceptions_ and alloc_folded_stacks.out).\n"
    "\n"
    "options:\n"
    "  -top N                how many functions and stacks to list (default 15)\n"
    "  -processfilter NAME   only samples of processes named NAME\n"
    "\n"
    "EXAMPLES:\n"
    "    profcpu view sample.trace.zip                      # the summary\n"
    "    profcpu view sample.trace.zip -top 40              # longer lists\n"
    "    perfcollect view sample.trace.zip -processfilter dotnet  # one process\n";

#define STACK_FRAMES_SHOWN 16

/* Sample counts per interned string (function, stack, process, thread). */
struct tally {
	const char *key;
	uint64_t self, total;
	long last_sample; /* the sample that last counted `total`, to count once */
};

struct tally_map {
	struct tally *slots;
	size_t size, used;
};

static struct tally *tally_get(struct tally_map *map, const char *key)
{
	size_t index;

	if (2 * (map->used + 1) > map->size) {
		struct tally_map bigger = {.size = map->size ? 2 * map->size : 256};

		bigger.slots = xcalloc(bigger.size, sizeof(*bigger.slots));
		for (size_t i = 0; i < map->size; i++)
			if (map->slots[i].key)
				*tally_get(&bigger, map->slots[i].key) = map->slots[i];
		free(map->slots);
		*map = bigger;
	}
	/* Keys are interned: the pointer is the identity. */
	index = ((uintptr_t)key >> 3) * 0x9E3779B97F4A7C15ULL % map->size;
	while (map->slots[index].key && map->slots[index].key != key)
		index = (index + 1) % map->size;
	if (!map->slots[index].key) {
		map->slots[index] = (struct tally){.key = key, .last_sample = -1};
		map->used++;
	}
	return &map->slots[index];
}

struct summary {
	const char *process_filter;
	struct string_table *strings;
	struct tally_map functions, stacks, processes, threads;
	const char *event;
	long samples, filtered_out;
	double first_seconds, last_seconds;
	bool cpus[1024], cpu_missing;
	const char **names; /* the current sample's frames, reused */
	size_t name_capacity;
	char *text;
	size_t text_capacity;
};

static void append(struct summary *summary, size_t *length, const char *part)
{
	size_t part_length = strlen(part);

	grow_array((void **)&summary->text, &summary->text_capacity, *length + part_length + 1, 1);
	memcpy(summary->text + *length, part, part_length + 1);
	*length += part_length;
}

static const char *intern_frame(struct summary *summary, const struct perf_script_frame *frame)
{
	size_t length = 0;

	append(summary, &length, frame->module[0] ? frame->module : "?");
	append(summary, &length, "!");
	append(summary, &length, frame->symbol);
	return string_table_intern(summary->strings, summary->text);
}

static void count_sample(const struct perf_script_sample *sample, void *context)
{
	struct summary *summary = context;
	char label[64];
	size_t length = 0;
	long index;

	if (summary->process_filter && strcmp(sample->comm, summary->process_filter)) {
		summary->filtered_out++;
		return;
	}
	index = summary->samples++;
	if (index == 0 || sample->seconds < summary->first_seconds)
		summary->first_seconds = sample->seconds;
	if (index == 0 || sample->seconds > summary->last_seconds)
		summary->last_seconds = sample->seconds;
	if (!summary->event)
		summary->event = string_table_intern(summary->strings, sample->event);
	if (sample->cpu >= 0 && sample->cpu < 1024)
		summary->cpus[sample->cpu] = true;
	else
		summary->cpu_missing = true;

	snprintf(label, sizeof(label), " (%d)", sample->pid);
	append(summary, &length, sample->comm);
	append(summary, &length, label);
	tally_get(&summary->processes, string_table_intern(summary->strings, summary->text))
	    ->self++;
	snprintf(label, sizeof(label), "%d", sample->tid);
	tally_get(&summary->threads, string_table_intern(summary->strings, label))->self++;

	grow_array((void **)&summary->names, &summary->name_capacity, sample->frame_count + 1,
		   sizeof(*summary->names));
	length = 0;
	for (size_t i = 0; i < sample->frame_count; i++) {
		struct tally *function;

		summary->names[i] = intern_frame(summary, &sample->frames[i]);
		function = tally_get(&summary->functions, summary->names[i]);
		if (i == 0)
			function->self++;
		if (function->last_sample != index) {
			function->total++;
			function->last_sample = index;
		}
	}
	for (size_t i = 0; i < sample->frame_count; i++) {
		if (i)
			append(summary, &length, "\n");
		append(summary, &length, summary->names[i]);
	}
	if (!sample->frame_count)
		append(summary, &length, "(no stack)");
	tally_get(&summary->stacks, string_table_intern(summary->strings, summary->text))->self++;
}

/* FILE * over the archive entry being read, for getline. */
static ssize_t read_archive_entry(void *cookie, char *buffer, size_t size)
{
	la_ssize_t length = archive_read_data(cookie, buffer, size);

	if (length < 0) {
		errno = EIO;
		return -1;
	}
	return length;
}

static bool ends_with(const char *text, const char *suffix)
{
	size_t length = strlen(text), suffix_length = strlen(suffix);

	return length >= suffix_length && !strcasecmp(text + length - suffix_length, suffix);
}

/* Opens the first *.data.txt of the zip, as PerfView does. Returns NULL
 * after printing why, or silently when the zip holds runtime events and no
 * samples (*events_only). */
static FILE *open_trace_text(const char *path, struct archive **archive, bool *events_only)
{
	struct archive_entry *entry;
	int status;

	if (ends_with(path, ".data.txt")) {
		FILE *text = fopen(path, "re");

		if (!text)
			report_error("cannot open %s: %s", path, strerror(errno));
		return text;
	}
	*archive = archive_read_new();
	archive_read_support_format_zip(*archive);
	if (archive_read_open_filename(*archive, path, 65536) != ARCHIVE_OK) {
		int error = archive_errno(*archive);

		if (error == ENOENT || error == EACCES || error == EISDIR)
			report_error("cannot open %s: %s", path, strerror(error));
		else
			report_error("%s is not a zip archive (%s): give the NAME.trace.zip that "
				     "collect wrote",
				     path, archive_error_string(*archive));
		return NULL;
	}
	while ((status = archive_read_next_header(*archive, &entry)) == ARCHIVE_OK) {
		if (ends_with(archive_entry_pathname(entry), ".data.txt"))
			return fopencookie(*archive, "r",
					   (cookie_io_functions_t){.read = read_archive_entry});
		*events_only |= ends_with(archive_entry_pathname(entry), ".nettrace");
	}
	if (status == ARCHIVE_EOF && *events_only)
		return NULL;
	*events_only = false;
	if (status == ARCHIVE_EOF)
		report_error("%s holds no *.data.txt: it is not a perfcollect trace", path);
	else
		report_error("%s is damaged: %s", path, archive_error_string(*archive));
	return NULL;
}

static int compare_self(const void *left, const void *right)
{
	const struct tally *a = left, *b = right;

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	return strcmp(a->key, b->key);
}

static int compare_total(const void *left, const void *right)
{
	const struct tally *a = left, *b = right;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return strcmp(a->key, b->key);
}

/* The map's tallies, packed and sorted. */
static struct tally *sorted(const struct tally_map *map, int (*compare)(const void *, const void *))
{
	struct tally *list = xcalloc(map->used, sizeof(*list));
	size_t count = 0;

	for (size_t i = 0; i < map->size; i++)
		if (map->slots[i].key)
			list[count++] = map->slots[i];
	qsort(list, count, sizeof(*list), compare);
	return list;
}

static double percent(uint64_t part, long whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_functions(const struct summary *summary, const char *title,
			    int (*compare)(const void *, const void *), size_t top)
{
	struct tally *list = sorted(&summary->functions, compare);

	printf("\n%s:\n  %6s %7s  %s\n", title, "self", "total", "function");
	for (size_t i = 0; i < top && i < summary->functions.used; i++) {
		printf("  %5.1f%% %6.1f%%  ", percent(list[i].self, summary->samples),
		       percent(list[i].total, summary->samples));
		write_printable(list[i].key, strlen(list[i].key), stdout);
		putchar('\n');
	}
	free(list);
}

static void print_stacks(const struct summary *summary, size_t top)
{
	struct tally *list = sorted(&summary->stacks, compare_self);

	printf("\ntop stacks (leaf first):\n");
	for (size_t i = 0; i < top && i < summary->stacks.used; i++) {
		const char *frame = list[i].key;
		size_t shown = 0;

		printf("  %5.1f%%  %llu samples\n", percent(list[i].self, summary->samples),
		       (unsigned long long)list[i].self);
		while (*frame && shown++ < STACK_FRAMES_SHOWN) {
			size_t length = strcspn(frame, "\n");

			fputs("          ", stdout);
			write_printable(frame, length, stdout);
			putchar('\n');
			frame += length + (frame[length] == '\n');
		}
		if (*frame) {
			size_t more = 1;

			for (const char *at = frame; (at = strchr(at, '\n')); at++)
				more++;
			printf("          ... %zu frames more, to the root\n", more);
		}
	}
	free(list);
}

static void print_summary(const struct summary *summary, const char *path, size_t top)
{
	struct tally *processes = sorted(&summary->processes, compare_self);
	size_t cpu_count = 0;

	for (size_t i = 0; i < sizeof(summary->cpus) / sizeof(*summary->cpus); i++)
		cpu_count += summary->cpus[i];
	printf("%s: %ld %s samples over %.1f s on %zu CPUs; %zu processes, %zu threads\n", path,
	       summary->samples, summary->event, summary->last_seconds - summary->first_seconds,
	       cpu_count, summary->processes.used, summary->threads.used);
	if (summary->cpu_missing)
		printf("warning: samples without a [CPU] field: PerfView cannot weigh them by "
		       "time\n");
	printf("\nprocesses:\n");
	for (size_t i = 0; i < top && i < summary->processes.used; i++) {
		printf("  %5.1f%%  %8llu  ", percent(processes[i].self, summary->samples),
		       (unsigned long long)processes[i].self);
		write_printable(processes[i].key, strlen(processes[i].key), stdout);
		putchar('\n');
	}
	free(processes);
	print_functions(summary, "top functions by self samples", compare_self, top);
	print_functions(summary, "top functions by total samples", compare_total, top);
	print_stacks(summary, top);
}

#define MAX_NETTRACE_IN_ZIP (1ULL << 30)

/* The first *.nettrace entry of the zip at `path`, read whole (at most
 * 1 GiB) into `*data`. Returns its size, 0 when there is none, or -1 after
 * printing why. */
static ssize_t read_nettrace_entry(const char *path, uint8_t **data)
{
	struct archive *archive = archive_read_new();
	struct archive_entry *entry;
	ssize_t size = 0;

	archive_read_support_format_zip(archive);
	if (archive_read_open_filename(archive, path, 65536) != ARCHIVE_OK) {
		archive_read_free(archive);
		return 0; /* not a zip: the samples' reader said so */
	}
	while (archive_read_next_header(archive, &entry) == ARCHIVE_OK) {
		size_t capacity = 0;
		la_ssize_t length;

		if (!ends_with(archive_entry_pathname(entry), ".nettrace"))
			continue;
		do {
			grow_array((void **)data, &capacity, (size_t)size + 65536, 1);
			length = archive_read_data(archive, *data + size, 65536);
			size += length > 0 ? length : 0;
		} while (length > 0 && (uint64_t)size <= MAX_NETTRACE_IN_ZIP);
		if (length < 0 || (uint64_t)size > MAX_NETTRACE_IN_ZIP) {
			report_error("%s: its runtime events cannot be read: %s", path,
				     length < 0 ? archive_error_string(archive)
						: "larger than 1 GiB");
			size = -1;
		}
		break;
	}
	archive_read_free(archive);
	return size;
}

/* What the zip's runtime events say, after the samples. Returns 1 when
 * printed, 0 when the zip holds none, -1 when they are unreadable. */
static int print_runtime_events(const char *path)
{
	struct runtime_trace trace;
	uint8_t *data = NULL;
	ssize_t size = ends_with(path, ".data.txt") ? 0 : read_nettrace_entry(path, &data);
	int status = size > 0 ? 1 : (int)size;

	if (size > 0) {
		if (runtime_trace_parse(data, (size_t)size, &trace) < 0) {
			report_error("%s: its runtime events are damaged: %s", path, trace.why);
			status = trace.events.events ? 1 : -1;
		}
		if (status > 0) {
			putchar('\n');
			runtime_events_print(&trace.events, stdout);
		}
		runtime_trace_release(&trace);
	}
	free(data);
	return status;
}

static void release_summary(struct summary *summary)
{
	free(summary->functions.slots);
	free(summary->stacks.slots);
	free(summary->processes.slots);
	free(summary->threads.slots);
	free(summary->names);
	free(summary->text);
	string_table_free(summary->strings);
}

int cmd_view(int argc, char **argv)
{
	enum options_result parsed;
	struct summary summary = {0};
	struct string_list positionals = {0};
	long top = 15;
	const struct option options[] = {
	    {"top", NULL, OPTION_INTEGER, &top},
	    {"processfilter", NULL, OPTION_STRING, &summary.process_filter},
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	struct archive *archive = NULL;
	const char *path;
	char error[256];
	bool events_only = false;
	FILE *text;
	long count;
	int status = 1;

	/* Unknown options (perfcollect's -graphtype, -viewer) only warn. */
	parsed = options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_WARN, usage);
	if (parsed != OPTIONS_PARSED) {
		string_list_clear(&positionals);
		return options_exit_status(parsed);
	}
	if (positionals.count == 0 || top < 1) {
		if (top < 1)
			report_error("invalid -top %ld: give 1 or more", top);
		else
			report_error("view needs a trace: profcpu view NAME.trace.zip");
		string_list_clear(&positionals);
		return 2;
	}
	path = positionals.items[0];
	for (size_t i = 1; i < positionals.count; i++)
		report_warning("ignoring argument '%s'", positionals.items[i]);
	string_list_clear(&positionals);

	text = open_trace_text(path, &archive, &events_only);
	if (text) {
		summary.strings = string_table_new();
		count = perf_script_read(text, count_sample, &summary, error, sizeof(error));
		if (count < 0)
			report_error("%s: perf.data.txt is damaged: %s", path, error);
		else if (summary.samples == 0)
			report_error("%s holds no samples%s", path,
				     summary.filtered_out ? " of that -processfilter" : "");
		else {
			print_summary(&summary, path, (size_t)top);
			status = 0;
		}
		fclose(text);
		release_summary(&summary);
	}
	if (archive)
		archive_read_free(archive);
	if (events_only) {
		printf("%s: runtime events only, no samples\n", path);
		status = print_runtime_events(path) > 0 ? 0 : 1;
	} else if (status == 0 && print_runtime_events(path) < 0) {
		status = 1;
	}
	if (status == 0 && runtime_profiles_view(path, (size_t)top, stdout) < 0)
		status = 1;
	return status;
}
