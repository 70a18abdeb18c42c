#include "perfmap.h"
#include "buffer.h"
#include "target_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Names live in `text`, which moves when it grows: keep offsets. */
struct region {
	uint64_t start, size;
	size_t name_offset;
};

struct perfmap {
	struct region *regions;
	size_t count, capacity;
	bool sorted;
	size_t malformed;

	char *text; /* complete lines read so far, each ending in '\0' */
	size_t text_length, text_capacity;
	char *pending; /* the start of a line whose newline has not come yet */
	size_t pending_length, pending_capacity;
	bool skipping_long_line; /* drop bytes up to the next newline */
	size_t long_lines;
	struct target_file_budget budget;
};

struct perfmap *perfmap_new(void)
{
	struct perfmap *map = calloc(1, sizeof(struct perfmap));

	if (map)
		map->budget = (struct target_file_budget){.max_bytes = PERFMAP_MAX_BYTES,
							  .max_seconds = PERFMAP_MAX_SECONDS};
	return map;
}

void perfmap_free(struct perfmap *map)
{
	if (!map)
		return;
	free(map->regions);
	free(map->text);
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
	struct region region;

	if (map->count == PERFMAP_MAX_ENTRIES) {
		map->budget.stopped_by = "the limit of " PERFMAP_MAX_ENTRIES_TEXT " entries";
		return;
	}
	if (memchr(line, '\0', length) || !parse_hex_field(&cursor, end, &region.start) ||
	    !parse_hex_field(&cursor, end, &region.size) || cursor == end || region.size == 0 ||
	    region.start + region.size < region.start) {
		map->malformed++;
		return;
	}
	if (!buffer_reserve((void **)&map->text, &map->text_capacity, map->text_length + length + 1,
			    1) ||
	    !buffer_reserve((void **)&map->regions, &map->capacity, map->count + 1,
			    sizeof(region))) {
		map->malformed++;
		return;
	}
	region.name_offset = map->text_length + (size_t)(cursor - line);
	memcpy(map->text + map->text_length, line, length);
	map->text_length += length;
	map->text[map->text_length++] = '\0';
	map->regions[map->count++] = region;
	map->sorted = false;
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

static int compare_regions(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Same start: file order, which name offsets follow. */
	return (x->name_offset > y->name_offset) - (x->name_offset < y->name_offset);
}

/* Sorts by start address and keeps the latest line for each start. */
static void sort_regions(struct perfmap *map)
{
	size_t unique = 0;

	if (map->count > 1)
		qsort(map->regions, map->count, sizeof(*map->regions), compare_regions);
	for (size_t i = 0; i < map->count; i++) {
		if (unique && map->regions[unique - 1].start == map->regions[i].start)
			unique--;
		map->regions[unique++] = map->regions[i];
	}
	map->count = unique;
	map->sorted = true;
}

/* The region holding `address` in the sorted map, or NULL. */
static const struct region *find_region(const struct perfmap *map, uint64_t address)
{
	size_t low = 0, high = map->count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (map->regions[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0 || address - map->regions[low - 1].start >= map->regions[low - 1].size)
		return NULL;
	return &map->regions[low - 1];
}

bool perfmap_lookup(struct perfmap *map, uint64_t address, struct perfmap_entry *found)
{
	const struct region *region;

	if (!map->sorted)
		sort_regions(map);
	region = find_region(map, address);
	if (!region)
		return false;
	found->start = region->start;
	found->size = region->size;
	found->name = map->text + region->name_offset;
	return true;
}

size_t perfmap_entry_count(const struct perfmap *map)
{
	return map->count;
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

size_t perfmap_text_size(const struct perfmap *map)
{
	return map->text_length;
}

static void write_region(const struct perfmap *map, const struct region *region, FILE *out)
{
	fprintf(out, "%llx %llx %s\n", (unsigned long long)region->start,
		(unsigned long long)region->size, map->text + region->name_offset);
}

int perfmap_write_copy(const struct perfmap *map, FILE *out)
{
	/* Well-formed lines only, so the copy is a valid perf map. */
	for (size_t i = 0; i < map->count; i++)
		write_region(map, &map->regions[i], out);
	return ferror(out) ? -1 : 0;
}

static int compare_addresses(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

size_t perfmap_write_entries_holding(struct perfmap *map, uint64_t *addresses, size_t count,
				     FILE *out)
{
	const struct region *previous = NULL;
	size_t written = 0;

	if (!map->sorted)
		sort_regions(map);
	qsort(addresses, count, sizeof(*addresses), compare_addresses);
	for (size_t i = 0; i < count; i++) {
		const struct region *region = find_region(map, addresses[i]);

		if (!region || region == previous)
			continue;
		write_region(map, region, out);
		previous = region;
		written++;
	}
	return written;
}
