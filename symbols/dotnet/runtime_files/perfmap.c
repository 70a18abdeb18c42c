#include "perfmap.h"
#include "buffer.h"
#include "code_ranges.h"
#include "target_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct perfmap {
	struct code_ranges *ranges;
	uint64_t time; /* when the lines read from now on appeared */
	size_t malformed;
	size_t lines_kept; /* for PERFMAP_MAX_ENTRIES: code_ranges_count() sorts */

	char *pending; /* the start of a line whose newline has not come yet */
	size_t pending_length, pending_capacity;
	bool skipping_long_line; /* drop bytes up to the next newline */
	size_t long_lines;
	struct target_file_budget budget;
};

struct perfmap *perfmap_new(void)
{
	struct perfmap *map = calloc(1, sizeof(*map));

	if (map && !(map->ranges = code_ranges_new())) {
		free(map);
		return NULL;
	}
	if (map)
		map->budget = (struct target_file_budget){.max_bytes = PERFMAP_MAX_BYTES,
							  .max_seconds = PERFMAP_MAX_SECONDS};
	return map;
}

void perfmap_free(struct perfmap *map)
{
	if (!map)
		return;
	code_ranges_free(map->ranges);
	free(map->pending);
	free(map);
}

/* Hex number, with or without 0x, followed by one space. */
static bool parse_hex_field(const char **cursor, const char *end, uint64_t *value)
{
	const char *p = *cursor;
	uint64_t result = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		int digit;

		if (*p >= '0' && *p <= '9')
			digit = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			digit = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			digit = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		result = result << 4 | (uint64_t)digit;
	}
	if (digits == 0 || p == end || *p != ' ')
		return false;
	*value = result;
	*cursor = p + 1;
	return true;
}

static void add_line(struct perfmap *map, const char *line, size_t length)
{
	const char *cursor = line, *end = line + length;
	uint64_t start, size;

	if (map->lines_kept == PERFMAP_MAX_ENTRIES) {
		map->budget.stopped_by = "the limit of " PERFMAP_MAX_ENTRIES_TEXT " entries";
		return;
	}
	if (!parse_hex_field(&cursor, end, &start) || !parse_hex_field(&cursor, end, &size) ||
	    cursor == end ||
	    !code_ranges_add(map->ranges, start, size, map->time, cursor, (size_t)(end - cursor)))
		map->malformed++;
	else
		map->lines_kept++;
}

/* Ends the pending line with `length` more bytes: parses it, unless it
 * grew too long, and starts the next line empty. */
static void end_line(struct perfmap *map, const char *text, size_t length)
{
	size_t total = map->pending_length + length;

	if (map->skipping_long_line)
		map->skipping_long_line = false; /* counted when it began */
	else if (total > PERFMAP_MAX_LINE)
		map->long_lines++;
	else if (map->pending_length == 0)
		add_line(map, text, length); /* the common case: no copy */
	else if (buffer_reserve((void **)&map->pending, &map->pending_capacity, total, 1)) {
		memcpy(map->pending + map->pending_length, text, length);
		add_line(map, map->pending, total);
	}
	map->pending_length = 0;
}

/* Keeps the start of an unfinished line; one longer than any real line is
 * counted and dropped up to its newline, so memory stays bounded. */
static void keep_pending(struct perfmap *map, const char *text, size_t length)
{
	if (map->skipping_long_line || length == 0)
		return;
	if (map->pending_length + length > PERFMAP_MAX_LINE ||
	    !buffer_reserve((void **)&map->pending, &map->pending_capacity,
			    map->pending_length + length, 1)) {
		map->skipping_long_line = true;
		map->long_lines++;
		map->pending_length = 0;
		return;
	}
	memcpy(map->pending + map->pending_length, text, length);
	map->pending_length += length;
}

/* Each byte is looked at once: linear in the input, however it is split. */
void perfmap_add_text(struct perfmap *map, const char *text, size_t length)
{
	const char *end = text + length, *newline;

	while (text < end && (newline = memchr(text, '\n', (size_t)(end - text)))) {
		end_line(map, text, (size_t)(newline - text));
		text = newline + 1;
	}
	keep_pending(map, text, (size_t)(end - text));
}

static void add_chunk(const char *bytes, size_t length, void *map)
{
	perfmap_add_text(map, bytes, length);
}

int perfmap_read_more(struct perfmap *map, int fd)
{
	return target_file_read(fd, &map->budget, add_chunk, map);
}

void perfmap_set_time(struct perfmap *map, uint64_t time)
{
	map->time = time;
}

bool perfmap_lookup_at(struct perfmap *map, uint64_t address, uint64_t time,
		       struct perfmap_entry *found)
{
	struct code_range range;
	bool named = code_ranges_lookup(map->ranges, address, time, &range);

	*found = (struct perfmap_entry){range.start, range.size, range.name, range.valid_until};
	return named;
}

bool perfmap_lookup(struct perfmap *map, uint64_t address, struct perfmap_entry *found)
{
	return perfmap_lookup_at(map, address, UINT64_MAX, found);
}

size_t perfmap_entry_count(const struct perfmap *map)
{
	return code_ranges_count(map->ranges);
}

size_t perfmap_malformed_count(const struct perfmap *map)
{
	return map->malformed;
}

size_t perfmap_long_line_count(const struct perfmap *map)
{
	return map->long_lines;
}

const struct target_file_budget *perfmap_read_budget(const struct perfmap *map)
{
	return &map->budget;
}
