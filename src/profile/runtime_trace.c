#include "runtime_trace.h"
#include "id_map.h"
#include "runtime_line_maps.h"
#include "runtime_methods.h"
#include "util.h"

#include <string.h>

struct readings {
	struct runtime_events_reading *events;
	struct runtime_methods_reading *methods;
	struct runtime_line_maps_reading *line_maps;
	struct runtime_stacks_reading *stacks;
};

static void take_event(const struct nettrace_event *event, void *context)
{
	struct readings *readings = context;

	runtime_events_reading_take(readings->events, event);
	runtime_methods_reading_take(readings->methods, event);
	runtime_line_maps_reading_take(readings->line_maps, event);
	runtime_stacks_reading_take(readings->stacks, event);
}

/* The lock waits of `stacks` by the thread that held the lock. */
static void tally_lock_owners(const struct runtime_stacks *stacks,
			      struct runtime_lock_owner_list *owners)
{
	struct id_map ids = {0};

	for (size_t i = 0; i < stacks->count; i++) {
		const struct runtime_stack_event *event = &stacks->events[i];
		bool added;
		uint32_t index;

		if (event->kind != RUNTIME_STACK_CONTENTION)
			continue;
		index = id_map_get(&ids, event->lock_owner, 0, &added);
		if (added) {
			grow_array((void **)&owners->items, &owners->capacity, index + 1,
				   sizeof(*owners->items));
			owners->items[index] = (struct runtime_lock_owner){event->lock_owner, 0, 0};
		}
		owners->items[index].waits++;
		owners->items[index].nanoseconds += event->weight;
	}
	owners->count = ids.count;
	id_map_release(&ids);
}

/* The readings are finished while the bytes they point into are still
 * there. */
static int parse_trace(const uint8_t *data, size_t size, void *context, char *why, size_t why_size)
{
	struct runtime_trace *trace = context;
	struct readings readings = {
	    runtime_events_reading_start(&trace->events),
	    runtime_methods_reading_start(&trace->events.info), runtime_line_maps_reading_start(),
	    runtime_stacks_reading_start(&trace->stacks, &trace->events.info)};
	char methods_why[160];
	int status =
	    nettrace_parse(data, size, &trace->events.info, take_event, &readings, why, why_size);

	runtime_events_reading_finish(readings.events);
	trace->methods = runtime_methods_reading_finish(readings.methods, &trace->process_id,
							methods_why, sizeof(methods_why));
	trace->lines = runtime_line_maps_reading_finish(readings.line_maps);
	runtime_stacks_reading_finish(readings.stacks);
	trace->events.contentions = trace->stacks.seen[RUNTIME_STACK_CONTENTION];
	trace->events.contention_seconds =
	    (double)trace->stacks.seen_weight[RUNTIME_STACK_CONTENTION] / 1e9;
	tally_lock_owners(&trace->stacks, &trace->events.lock_owners);
	return status;
}

int runtime_trace_read(const char *path, struct runtime_trace *trace)
{
	*trace = (struct runtime_trace){0};
	trace->status = nettrace_map_file(path, parse_trace, trace, trace->why, sizeof(trace->why));
	return trace->status;
}

int runtime_trace_parse(const uint8_t *data, size_t size, struct runtime_trace *trace)
{
	*trace = (struct runtime_trace){0};
	trace->status = parse_trace(data, size, trace, trace->why, sizeof(trace->why));
	return trace->status;
}

struct code_ranges *runtime_trace_take_methods(struct runtime_trace *trace)
{
	struct code_ranges *methods = trace->methods;

	trace->methods = NULL;
	return methods;
}

struct managed_lines *runtime_trace_take_lines(struct runtime_trace *trace)
{
	struct managed_lines *lines = trace->lines;

	trace->lines = NULL;
	return lines;
}

void runtime_trace_release(struct runtime_trace *trace)
{
	runtime_events_release(&trace->events);
	runtime_stacks_release(&trace->stacks);
	code_ranges_free(trace->methods);
	trace->methods = NULL;
	managed_lines_free(trace->lines);
	trace->lines = NULL;
}
