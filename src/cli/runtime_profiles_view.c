#include "runtime_profiles_view.h"
#include "util.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRY   (256u << 20) /* bytes of one folded file read */
#define LEAF_FRAMES 3		 /* frames shown of each stack */

static const struct {
	const char *file, *heading, *unit;
	double per_unit; /* the file's counts in one unit shown */
	int decimals;
} profiles[] = {
    {"contention_folded_stacks.out", "lock contention", "ms waited", 1e6, 1},
    {"exceptions_folded_stacks.out", "exceptions", "thrown", 1, 0},
    {"alloc_folded_stacks.out", "allocations (sampled)", "MB allocated", 1e6, 1},
    {"waits_folded_stacks.out", "waits on wait handles", "ms waited", 1e6, 1},
};

struct stack_line {
	const char *stack; /* within the entry's text, NUL-terminated */
	uint64_t count;
};

static int by_count(const void *left, const void *right)
{
	const struct stack_line *a = left, *b = right;

	return (a->count < b->count) - (a->count > b->count);
}

/* The stack's last LEAF_FRAMES frames, printable. */
static void print_leaf_end(const char *stack, FILE *out)
{
	const char *start = stack + strlen(stack);
	int separators = 0;
	char *shown;

	while (start > stack && !(start[-1] == ';' && ++separators == LEAF_FRAMES))
		start--;
	shown = xasprintf("%s%s", start > stack ? "...;" : "", start);
	make_printable(shown);
	fprintf(out, "%s\n", shown);
	free(shown);
}

/* Folded lines ("frames COUNT") of `text`, split in place; lines that are
 * not are skipped. */
static struct stack_line *read_lines(char *text, size_t *count, uint64_t *total)
{
	struct stack_line *lines = NULL;
	size_t capacity = 0;

	*count = 0;
	*total = 0;
	for (char *line = text, *next; line && *line; line = next) {
		char *space, *end;
		unsigned long long value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		space = strrchr(line, ' ');
		if (!space || space == line)
			continue;
		value = strtoull(space + 1, &end, 10);
		if (*end || end == space + 1)
			continue;
		*space = '\0';
		grow_array((void **)&lines, &capacity, *count + 1, sizeof(*lines));
		lines[(*count)++] = (struct stack_line){line, value};
		*total += value;
	}
	return lines;
}

static void print_profile(size_t which, char *text, size_t top, FILE *out)
{
	size_t count;
	uint64_t total;
	struct stack_line *lines = read_lines(text, &count, &total);

	if (count > 1)
		qsort(lines, count, sizeof(*lines), by_count);
	fprintf(out, "\n%s: %.*f %s in all (%s); heaviest stacks:\n", profiles[which].heading,
		profiles[which].decimals, (double)total / profiles[which].per_unit,
		profiles[which].unit, profiles[which].file);
	for (size_t i = 0; i < count && i < top; i++) {
		fprintf(out, "  %5.1f%%  ",
			total ? 100.0 * (double)lines[i].count / (double)total : 0);
		print_leaf_end(lines[i].stack, out);
	}
	free(lines);
}

/* Which of `profiles` the entry named `name` is, or -1. */
static int profile_of(const char *name)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

	for (size_t i = 0; i < sizeof(profiles) / sizeof(*profiles); i++)
		if (!strcmp(base, profiles[i].file))
			return (int)i;
	return -1;
}

int runtime_profiles_view(const char *path, size_t top, FILE *out)
{
	struct archive *archive = archive_read_new();
	struct archive_entry *entry;
	int printed = 0;

	archive_read_support_format_zip(archive);
	if (archive_read_open_filename(archive, path, 65536) != ARCHIVE_OK) {
		archive_read_free(archive);
		return 0; /* not a zip: the samples' reader said so */
	}
	while (printed >= 0 && archive_read_next_header(archive, &entry) == ARCHIVE_OK) {
		int which = profile_of(archive_entry_pathname(entry));
		char *text = NULL;
		size_t size = 0, capacity = 0;
		la_ssize_t length;

		if (which < 0)
			continue;
		do {
			grow_array((void **)&text, &capacity, size + 65536 + 1, 1);
			length = archive_read_data(archive, text + size, 65536);
			size += length > 0 ? (size_t)length : 0;
		} while (length > 0 && size <= MAX_ENTRY);
		if (length < 0 || size > MAX_ENTRY) {
			report_error("%s: its %s cannot be read: %s", path, profiles[which].file,
				     length < 0 ? archive_error_string(archive)
						: "larger than 256 MiB");
			printed = -1;
		} else {
			text[size] = '\0';
			print_profile((size_t)which, text, top, out);
			printed++;
		}
		free(text);
	}
	archive_read_free(archive);
	return printed;
}
