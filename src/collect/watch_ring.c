#include "watch_ring.h"
#include "perf_data.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void watch_ring_add(struct watch_ring *ring, const char *dir, bool owns_dir, uint64_t start,
		    uint64_t end)
{
	grow_array((void **)&ring->chunks, &ring->capacity, ring->count + 1, sizeof(*ring->chunks));
	ring->chunks[ring->count++] = (struct watch_chunk){
	    .dir = xstrdup(dir), .owns_dir = owns_dir, .start = start, .end = end};
}

static void delete_chunk(struct watch_chunk *chunk)
{
	if (chunk->owns_dir) {
		remove_flat_folder(chunk->dir);
	} else {
		char *path = xasprintf("%s/perf.data", chunk->dir);

		unlink(path);
		free(path);
	}
	free(chunk->dir);
}

void watch_ring_drop_before(struct watch_ring *ring, uint64_t keep_from)
{
	size_t dropped = 0;

	while (dropped < ring->count && ring->chunks[dropped].end < keep_from)
		delete_chunk(&ring->chunks[dropped++]);
	memmove(ring->chunks, ring->chunks + dropped,
		(ring->count - dropped) * sizeof(*ring->chunks));
	ring->count -= dropped;
}

/* The events a joined file records beside the sampling one: the switches
 * of --off-cpu. */
#define MAX_EVENTS 4

/* An event's ids in the window's periods, every one's (a thread born in a
 * later period has ids of its own). */
struct event_ids {
	uint64_t *ids;
	size_t count;
};

struct joining {
	struct perf_data_reader *reader;
	struct event_ids ids[MAX_EVENTS]; /* with more than one event */
	struct perf_data_writer *writer;
	uint64_t from, to;
	bool first;	 /* the first period of the window: its synthesized records count */
	int write_error; /* errno of the first failed write */
	long samples;
};

static int copy_record(const struct perf_event_header *record, void *context)
{
	struct joining *joining = context;
	uint64_t time;
	bool timed = perf_data_reader_record_time(joining->reader, record, &time);

	if (record->type == PERF_RECORD_SAMPLE) {
		if (!timed || time < joining->from || time > joining->to)
			return 0;
		joining->samples++;
	} else if (timed && time == 0 && !joining->first) {
		return 0;
	}
	if (perf_data_writer_add(joining->writer, record) < 0) {
		joining->write_error = errno;
		return -1;
	}
	return 0;
}

static int compare_ids(const void *left, const void *right)
{
	uint64_t a = *(const uint64_t *)left, b = *(const uint64_t *)right;

	return (a > b) - (a < b);
}

/* The ids of each event of the periods that overlap [from, to], once each,
 * when they record more than one event (their samples carry ids then). */
static void gather_ids(struct joining *joining, const struct watch_ring *ring)
{
	for (size_t i = 0; i < ring->count; i++) {
		char *path = xasprintf("%s/perf.data", ring->chunks[i].dir);
		struct perf_data_reader *reader = NULL;
		size_t events;

		if (ring->chunks[i].end >= joining->from && ring->chunks[i].start <= joining->to)
			reader = perf_data_reader_open(path, NULL, 0);
		free(path);
		events = reader ? perf_data_reader_event_count(reader) : 0;
		for (size_t event = 0; events > 1 && event < events && event < MAX_EVENTS;
		     event++) {
			struct event_ids *list = &joining->ids[event];
			size_t count;
			uint64_t *ids = perf_data_reader_event_ids(reader, event, &count);

			list->ids = xrealloc(list->ids, (list->count + count + 1) * sizeof(*ids));
			memcpy(list->ids + list->count, ids, count * sizeof(*ids));
			list->count += count;
			free(ids);
		}
		if (reader)
			perf_data_reader_close(reader);
	}
	for (size_t event = 0; event < MAX_EVENTS; event++) {
		struct event_ids *list = &joining->ids[event];
		size_t kept = 0;

		if (list->count)
			qsort(list->ids, list->count, sizeof(*list->ids), compare_ids);
		for (size_t i = 0; i < list->count; i++)
			if (!kept || list->ids[kept - 1] != list->ids[i])
				list->ids[kept++] = list->ids[i];
		list->count = kept;
	}
}

/* Creates the joined file with the attrs of the first period read, and
 * the ids of every period. */
static bool create_writer(struct joining *joining, const char *path, const char *command_line)
{
	struct perf_data_reader *reader = joining->reader;
	struct perf_data_info info = {.event_name = perf_data_reader_event_name(reader, 0),
				      .command_line = command_line,
				      .event_ids = joining->ids[0].ids,
				      .event_id_count = joining->ids[0].count};
	struct perf_data_extra_event more[MAX_EVENTS - 1];
	size_t events = perf_data_reader_event_count(reader);

	for (size_t event = 1; event < events && event < MAX_EVENTS; event++)
		more[info.more_event_count++] = (struct perf_data_extra_event){
		    .attr = *perf_data_reader_attr(reader, event),
		    .name = perf_data_reader_event_name(reader, event),
		    .ids = joining->ids[event].ids,
		    .id_count = joining->ids[event].count};
	info.more_events = more;
	info.tracing_data = perf_data_reader_tracing_data(reader, &info.tracing_data_size);
	joining->writer =
	    perf_data_writer_create(path, perf_data_reader_attr(reader, 0), &info, true);
	if (!joining->writer) {
		joining->write_error = errno;
		report_error("cannot write %s: %s", path, strerror(errno));
	}
	return joining->writer != NULL;
}

/* Copies one period's records. A period that cannot be read (cut short by
 * a full disk) is left out, or kept up to where it ends. */
static void copy_chunk(struct joining *joining, const struct watch_chunk *chunk, const char *path,
		       const char *command_line)
{
	char error[256], *chunk_path = xasprintf("%s/perf.data", chunk->dir);

	joining->reader = perf_data_reader_open(chunk_path, error, sizeof(error));
	free(chunk_path);
	if (!joining->reader) {
		report_warning("a second of the ring is left out: %s", error);
		return;
	}
	if ((joining->writer || create_writer(joining, path, command_line)) &&
	    perf_data_reader_for_each(joining->reader, copy_record, joining, error, sizeof(error)) <
		0 &&
	    !joining->write_error)
		report_warning("a second of the ring ends early: %s", error);
	perf_data_reader_close(joining->reader);
	joining->reader = NULL;
	joining->first = false;
}

long watch_ring_write(const struct watch_ring *ring, uint64_t from, uint64_t to, const char *path,
		      const char *command_line)
{
	struct joining joining = {.from = from, .to = to, .first = true};

	gather_ids(&joining, ring);
	for (size_t i = 0; i < ring->count && !joining.write_error; i++)
		if (ring->chunks[i].end >= from && ring->chunks[i].start <= to)
			copy_chunk(&joining, &ring->chunks[i], path, command_line);
	for (size_t event = 0; event < MAX_EVENTS; event++)
		free(joining.ids[event].ids);
	if (!joining.writer) {
		if (!joining.write_error)
			report_error("nothing was recorded for %s", path);
		return -1;
	}
	if (perf_data_writer_finish(joining.writer) < 0 && !joining.write_error)
		joining.write_error = errno;
	if (joining.write_error)
		report_error("writing %s failed: %s; it keeps the records written until then%s",
			     path, strerror(joining.write_error),
			     joining.write_error == ENOSPC ? "; free some disk space" : "");
	return joining.samples;
}

void watch_ring_release(struct watch_ring *ring)
{
	for (size_t i = 0; i < ring->count; i++)
		delete_chunk(&ring->chunks[i]);
	free(ring->chunks);
	*ring = (struct watch_ring){0};
}
