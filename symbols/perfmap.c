#include "perfmap.h"
#include "buffer.h"

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
	char *pending; /* bytes after the last newline seen */
	size_t pending_length, pending_capacity;
};

struct perfmap *perfmap_new(void)
{
	return calloc(1, sizeof(struct perfmap));
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

void perfmap_add_text(struct perfmap *map, const char *text, size_t length)
{
	size_t line_start = 0, consumed = 0;

	if (!buffer_reserve((void **)&map->pending, &map->pending_capacity,
			    map->pending_length + length, 1))
		return;
	memcpy(map->pending + map->pending_length, text, length);
	map->pending_length += length;
	for (size_t i = 0; i < map->pending_length; i++) {
		if (map->pending[i] != '\n')
			continue;
		add_line(map, map->pending + line_start, i - line_start);
		line_start = consumed = i + 1;
	}
	memmove(map->pending, map->pending + consumed, map->pending_length - consumed);
	map->pending_length -= consumed;
}

int perfmap_read_more(struct perfmap *map, int fd)
{
	char buffer[65536];
	ssize_t n;

	while ((n = read(fd, buffer, sizeof(buffer))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		perfmap_add_text(map, buffer, (size_t)n);
	}
	return 0;
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

bool perfmap_lookup(struct perfmap *map, uint64_t address, struct perfmap_entry *found)
{
	size_t low = 0, high;
	const struct region *region;

	if (!map->sorted)
		sort_regions(map);
	high = map->count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (map->regions[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return false;
	region = &map->regions[low - 1];
	if (address - region->start >= region->size)
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

int perfmap_write_copy(const struct perfmap *map, FILE *out)
{
	/* Well-formed lines only, so the copy is a valid perf map. */
	for (size_t i = 0; i < map->count; i++) {
		const struct region *region = &map->regions[i];

		fprintf(out, "%llx %llx %s\n", (unsigned long long)region->start,
			(unsigned long long)region->size, map->text + region->name_offset);
	}
	return ferror(out) ? -1 : 0;
}
