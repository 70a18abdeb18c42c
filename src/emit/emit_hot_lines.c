/* The hottest source lines of a profile, each function's lines with their
 * share of the samples and the source text around them, as `perf annotate
 * --stdio` shows them for native code. */
#include "emit.h"
#include "id_map.h"
#include "managed_name.h"
#include "util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	MAX_SOURCE_BYTES = 32 << 20, /* a larger "source file" is not one */
	CONTEXT_LINES = 2,	     /* shown around each hot line */
	MAX_TEXT_WIDTH = 160,	     /* of a source line shown */
};

/* One line of one function, and its samples. */
struct hot_line {
	uint32_t function; /* index into hot_lines.functions */
	uint32_t line;
	uint64_t samples;
};

struct hot_function {
	const char *name, *file;
	uint64_t samples;
};

struct hot_lines {
	struct hot_function *functions;
	size_t function_count, function_capacity;
	struct hot_line *lines;
	size_t line_count, line_capacity;
	struct string_table *names; /* owns the readable names */
};

/* The samples whose leaf is each location: its own line is where the time
 * went (self time). */
static uint64_t *samples_by_leaf(const struct profile *profile)
{
	uint64_t *counts = xcalloc(profile->location_count + 1, sizeof(*counts));

	for (size_t i = 0; i < profile->sample_count; i++) {
		const struct profile_stack *stack = &profile->stacks[profile->samples[i].stack];

		if (stack->depth)
			counts[profile->stack_locations[stack->first]]++;
	}
	return counts;
}

/* The function's name as the folded stacks show it: a .NET method's
 * readable name without its tier (its tiers are one function here, as
 * there), any other name as it is. Interned, so that one name is one
 * pointer. */
static const char *readable_name(struct hot_lines *hot, const struct profile_location *location,
				 const char *function)
{
	char *readable;
	const char *interned;

	if (location->kind == FRAME_KERNEL)
		return function;
	readable = managed_name_readable(function, false);
	interned = readable ? string_table_intern(hot->names, readable) : function;
	free(readable);
	return interned;
}

static void gather(const struct profile *profile, struct hot_lines *hot)
{
	uint64_t *counts = samples_by_leaf(profile);
	struct id_map functions = {0}, lines = {0};

	for (size_t i = 0; i < profile->location_count; i++) {
		const struct profile_frame *frame =
		    &profile->frames[profile->locations[i].first_frame];
		const char *name;
		bool added;
		uint32_t function, line;

		if (!counts[i] || !frame->file)
			continue;
		name = readable_name(hot, &profile->locations[i], frame->function);
		function = id_map_get(&functions, (uintptr_t)name, (uintptr_t)frame->file, &added);
		if (added) {
			grow_array((void **)&hot->functions, &hot->function_capacity, function + 1,
				   sizeof(*hot->functions));
			hot->functions[function] = (struct hot_function){name, frame->file, 0};
			hot->function_count = function + 1;
		}
		hot->functions[function].samples += counts[i];
		line = id_map_get(&lines, function, frame->line, &added);
		if (added) {
			grow_array((void **)&hot->lines, &hot->line_capacity, line + 1,
				   sizeof(*hot->lines));
			hot->lines[line] = (struct hot_line){function, frame->line, 0};
			hot->line_count = line + 1;
		}
		hot->lines[line].samples += counts[i];
	}
	id_map_release(&functions);
	id_map_release(&lines);
	free(counts);
}

/* Hottest functions first; a function's lines by number. */
static int compare_functions(const void *a, const void *b, void *functions)
{
	const struct hot_function *x = (struct hot_function *)functions + *(const uint32_t *)a;
	const struct hot_function *y = (struct hot_function *)functions + *(const uint32_t *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int compare_lines(const void *a, const void *b)
{
	const struct hot_line *x = a, *y = b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* The text of the regular file `path`, when it is of sane size; NULL
 * otherwise. */
static char *read_text_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat status;
	char *text = NULL;

	if (fd >= 0 && fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
	    status.st_size < MAX_SOURCE_BYTES) {
		text = xmalloc((size_t)status.st_size + 1);
		*size = 0;
		for (ssize_t got;
		     *size < (size_t)status.st_size &&
		     (got = read(fd, text + *size, (size_t)status.st_size - *size)) > 0;)
			*size += (size_t)got;
		text[*size] = '\0';
	}
	if (fd >= 0)
		close(fd);
	return text;
}

/* The source file's text: under `source_dir` by its path or the longest
 * tail of it found there (a tree checked out elsewhere), else at its path.
 * NULL when none is found. */
static char *read_source(const char *path, const char *source_dir, size_t *size)
{
	for (const char *tail = path; source_dir && tail; tail = strchr(tail + 1, '/')) {
		char *candidate = xasprintf("%s/%s", source_dir, tail + (*tail == '/'));
		char *text = read_text_file(candidate, size);

		free(candidate);
		if (text)
			return text;
	}
	return read_text_file(path, size);
}

/* Where each line of `text` starts; lines[0] is unused (lines count from 1). */
static size_t split_lines(char *text, size_t size, const char ***lines)
{
	size_t count = 0, capacity = 0;

	*lines = NULL;
	for (char *cursor = text; cursor < text + size;) {
		char *end = memchr(cursor, '\n', (size_t)(text + size - cursor));

		grow_array((void **)lines, &capacity, count + 2, sizeof(**lines));
		(*lines)[++count] = cursor;
		if (!end)
			break;
		*end = '\0';
		cursor = end + 1;
	}
	return count;
}

/* A line of source as the terminal should show it: tabs as they are,
 * other control characters as '?', cut at MAX_TEXT_WIDTH bytes. */
static void write_source_text(const char *text, FILE *out)
{
	for (size_t i = 0; text[i] && i < MAX_TEXT_WIDTH; i++)
		fputc((unsigned char)text[i] < ' ' && text[i] != '\t' ? '?' : text[i], out);
	fputc('\n', out);
}

static void write_function(const struct hot_function *function, const struct hot_line *lines,
			   size_t count, uint64_t total, const struct hot_lines_source *source_at,
			   FILE *out)
{
	size_t size = 0, line_count = 0, shown_to = 0;
	char *text = source_at ? read_source(function->file, source_at->dir, &size) : NULL;
	const char **source = NULL;

	if (text)
		line_count = split_lines(text, size, &source);
	fprintf(out, "\n%6.2f%% %s  %s%s\n", 100.0 * (double)function->samples / (double)total,
		function->name, function->file, text || !source_at ? "" : "  (source not found)");
	fputs(" Percent |  Line | Source\n---------+-------+-------\n", out);
	for (size_t i = 0; i < count; i++) {
		uint32_t from = lines[i].line > CONTEXT_LINES ? lines[i].line - CONTEXT_LINES : 1;
		uint32_t to = lines[i].line + CONTEXT_LINES;

		if (from <= shown_to)
			from = (uint32_t)shown_to + 1;
		else if (shown_to && text)
			fputs("     ... |   ... |\n", out);
		if (!text || lines[i].line > line_count)
			from = to = lines[i].line;
		for (uint32_t line = from; line <= to && (line <= line_count || line == from);
		     line++) {
			double share = 0;

			for (size_t j = i; j < count && lines[j].line <= line; j++)
				if (lines[j].line == line)
					share = 100.0 * (double)lines[j].samples / (double)total;
			if (share > 0)
				fprintf(out, "%8.2f | %5" PRIu32 " | ", share, line);
			else
				fprintf(out, "         | %5" PRIu32 " | ", line);
			if (text && line <= line_count)
				write_source_text(source[line], out);
			else
				fputc('\n', out);
		}
		shown_to = to;
	}
	free(source);
	free(text);
}

int emit_hot_lines(const struct profile *profile, size_t top, const struct hot_lines_source *source,
		   FILE *out)
{
	struct hot_lines hot = {.names = string_table_new()};
	uint32_t *order;
	uint64_t with_lines = 0;

	gather(profile, &hot);
	for (size_t i = 0; i < hot.function_count; i++)
		with_lines += hot.functions[i].samples;
	fprintf(out, "%zu samples, %" PRIu64 " (%.1f%%) in code whose source line is known\n",
		profile->sample_count, with_lines,
		profile->sample_count ? 100.0 * (double)with_lines / (double)profile->sample_count
				      : 0.0);
	order = xcalloc(hot.function_count + 1, sizeof(*order));
	for (uint32_t i = 0; i < hot.function_count; i++)
		order[i] = i;
	if (hot.function_count > 1)
		qsort_r(order, hot.function_count, sizeof(*order), compare_functions,
			hot.functions);
	if (hot.line_count > 1)
		qsort(hot.lines, hot.line_count, sizeof(*hot.lines), compare_lines);
	for (size_t i = 0; i < hot.function_count && i < top; i++) {
		size_t first = 0, count = 0;

		while (first < hot.line_count && hot.lines[first].function != order[i])
			first++;
		while (first + count < hot.line_count &&
		       hot.lines[first + count].function == order[i])
			count++;
		write_function(&hot.functions[order[i]], hot.lines + first, count,
			       profile->sample_count, source, out);
	}
	free(order);
	free(hot.functions);
	free(hot.lines);
	string_table_free(hot.names);
	return ferror(out) ? -1 : 0;
}
