/* HEADER_EVENT_DESC: for each event its attr, ids and name, in the order
 * of the attr section. */
#include "perf_data_reader_internal.h"

#include "util.h"

#include <string.h>

struct cursor {
	const uint8_t *bytes;
	uint64_t size, position;
};

static bool take(struct cursor *cursor, void *value, uint64_t size)
{
	if (size > cursor->size - cursor->position)
		return false;
	if (value)
		memcpy(value, cursor->bytes + cursor->position, size);
	cursor->position += size;
	return true;
}

/* A perf string: u32 length, then that many bytes holding a NUL. */
static bool take_string(struct cursor *cursor, const char **string)
{
	uint32_t length;
	const char *start;

	if (!take(cursor, &length, sizeof(length)))
		return false;
	start = (const char *)cursor->bytes + cursor->position;
	if (!take(cursor, NULL, length) || !memchr(start, '\0', length))
		return false;
	*string = start;
	return true;
}

int perf_data_read_event_names(struct perf_data_reader *reader, const uint8_t *section,
			       uint64_t size, char *error, size_t error_size)
{
	struct cursor cursor = {section, size, 0};
	uint32_t count, attr_size, id_count;
	const char *name;

	if (!take(&cursor, &count, sizeof(count)) || !take(&cursor, &attr_size, sizeof(attr_size)))
		return perf_data_set_error(error, error_size, "truncated HEADER_EVENT_DESC");
	for (uint32_t i = 0; i < count; i++) {
		if (!take(&cursor, NULL, attr_size) ||
		    !take(&cursor, &id_count, sizeof(id_count)) || !take_string(&cursor, &name) ||
		    !take(&cursor, NULL, (uint64_t)id_count * sizeof(uint64_t)))
			return perf_data_set_error(error, error_size,
						   "malformed HEADER_EVENT_DESC entry %u", i);
		if (i < reader->event_count && !reader->events[i].name && *name)
			reader->events[i].name = xstrdup(name);
	}
	return 0;
}
