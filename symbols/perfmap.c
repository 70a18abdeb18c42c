#include "perfmap.h"
#include "buffer.h"
#include "code_ranges.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct perfmap {
	struct code_ranges *ranges;
	uint64_t time; /* when the lines read from now on appeared */
	size_t malformed;

	char *pending; /* bytes after the last newline seen */
	size_t pending_length, pending_capacity;
};

struct perfmap *perfmap_new(void)
{
	struct perfmap *map = calloc(1, sizeof(*map));

	if (map && !(map->ranges = code_ranges_new())) {
		free(map);
		return NULL;
	}
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

	if (!parse_hex_field(&cursor, end, &start) || !parse_hex_field(&cursor, end, &size) ||
	    cursor == end ||
	    !code_ranges_add(map->ranges, start, size, map->time, cursor, (size_t)(end - cursor)))
		map->malformed++;
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
