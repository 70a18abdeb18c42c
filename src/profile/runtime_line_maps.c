#include "runtime_line_maps.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"
/* Bounds on what a hostile trace can make this keep. */
#define MAX_CODE       1000000
#define MAX_MODULES    65536
#define RECENT_THREADS 64

/* Event ids (ClrEtwAll.man); the two providers number them apart. */
enum {
	RUNTIME_METHOD_LOAD_VERBOSE = 143,
	RUNTIME_MODULE_LOAD = 152,
	RUNTIME_METHOD_IL_TO_NATIVE_MAP = 190,
	RUNDOWN_METHOD_DC_END_VERBOSE = 144,
	RUNDOWN_METHOD_DC_END_IL_TO_NATIVE_MAP = 150,
	RUNDOWN_MODULE_DC_END = 154,
};

/* A method event's payload: MethodID, ModuleID, MethodStartAddress,
 * MethodSize (u32), MethodToken (u32), ... */
struct method_event {
	uint64_t thread_id, method_id, module_id, start;
	uint32_t size, token;
	bool mapped; /* an IL map was paired with it */
};

/* An IL map's payload: MethodID, ReJITID, MethodExtent (u8),
 * CountOfMapEntries (u16), then the IL offsets and the native offsets
 * (u32 each). Only the main (hot) extent is kept: the method events give
 * its start. */
struct map_event {
	uint64_t thread_id, method_id;
	struct managed_line_map_entry *entries;
	size_t count;
};

struct mapped_code {
	struct method_event method;
	struct managed_line_map_entry *entries;
	size_t count;
};

struct module {
	uint64_t id;
	size_t order; /* when it was loaded: the latest of one id wins */
	char *path;
};

struct runtime_line_maps_reading {
	struct mapped_code *code;
	size_t code_count, code_capacity;
	struct module *modules;
	size_t module_count, module_capacity;
	/* The rundown sends a piece of code's map just before its method
	 * event; a JIT sends the method event first, then the map. */
	struct map_event rundown_map;
	struct method_event recent_loads[RECENT_THREADS];
	size_t next_recent_load;
};

static uint64_t payload_u64(const struct nettrace_event *event, size_t offset)
{
	uint64_t value = 0;

	if (offset + 8 <= event->payload_size)
		memcpy(&value, event->payload + offset, 8);
	return value;
}

static uint32_t payload_u32(const struct nettrace_event *event, size_t offset)
{
	uint32_t value = 0;

	if (offset + 4 <= event->payload_size)
		memcpy(&value, event->payload + offset, 4);
	return value;
}

static bool read_method(const struct nettrace_event *event, struct method_event *method)
{
	if (event->payload_size < 36)
		return false;
	*method = (struct method_event){.thread_id = event->thread_id,
					.method_id = payload_u64(event, 0),
					.module_id = payload_u64(event, 8),
					.start = payload_u64(event, 16),
					.size = payload_u32(event, 24),
					.token = payload_u32(event, 28)};
	return true;
}

static bool read_map(const struct nettrace_event *event, struct map_event *map)
{
	uint16_t count;

	if (event->payload_size < 19 || event->payload[16] != 0)
		return false;
	memcpy(&count, event->payload + 17, 2);
	if (count == 0 || event->payload_size < 19 + (size_t)count * 8)
		return false;
	*map = (struct map_event){.thread_id = event->thread_id,
				  .method_id = payload_u64(event, 0),
				  .entries = xcalloc(count, sizeof(*map->entries)),
				  .count = count};
	for (size_t i = 0; i < count; i++) {
		map->entries[i].il_offset = payload_u32(event, 19 + i * 4);
		map->entries[i].native_offset = payload_u32(event, 19 + (count + i) * 4);
	}
	return true;
}

/* Keeps `map` (taking its entries) as the map of `method`'s code. */
static void pair(struct runtime_line_maps_reading *reading, struct method_event *method,
		 struct map_event *map)
{
	if (reading->code_count == MAX_CODE || method->mapped) {
		free(map->entries);
	} else {
		grow_array((void **)&reading->code, &reading->code_capacity,
			   reading->code_count + 1, sizeof(*reading->code));
		reading->code[reading->code_count++] =
		    (struct mapped_code){*method, map->entries, map->count};
		method->mapped = true;
	}
	map->entries = NULL;
}

static bool same_code(const struct method_event *method, const struct map_event *map)
{
	return method->thread_id == map->thread_id && method->method_id == map->method_id;
}

static void take_rundown(struct runtime_line_maps_reading *reading,
			 const struct nettrace_event *event)
{
	struct method_event method;

	if (event->id == RUNDOWN_METHOD_DC_END_IL_TO_NATIVE_MAP) {
		free(reading->rundown_map.entries);
		if (!read_map(event, &reading->rundown_map))
			reading->rundown_map.entries = NULL;
	} else if (event->id == RUNDOWN_METHOD_DC_END_VERBOSE && reading->rundown_map.entries &&
		   read_method(event, &method) && same_code(&method, &reading->rundown_map)) {
		pair(reading, &method, &reading->rundown_map);
	}
}

/* The slot of `thread_id`'s latest method load: its own, or the oldest. */
static struct method_event *load_slot(struct runtime_line_maps_reading *reading, uint64_t thread_id)
{
	struct method_event *slot = &reading->recent_loads[reading->next_recent_load];

	for (size_t i = 0; i < RECENT_THREADS; i++)
		if (reading->recent_loads[i].thread_id == thread_id)
			return &reading->recent_loads[i];
	reading->next_recent_load = (reading->next_recent_load + 1) % RECENT_THREADS;
	return slot;
}

static void take_runtime(struct runtime_line_maps_reading *reading,
			 const struct nettrace_event *event)
{
	struct method_event *load;
	struct map_event map;

	if (event->id == RUNTIME_METHOD_LOAD_VERBOSE) {
		load = load_slot(reading, event->thread_id);
		if (!read_method(event, load))
			load->mapped = true; /* nothing to pair with */
	} else if (event->id == RUNTIME_METHOD_IL_TO_NATIVE_MAP && read_map(event, &map)) {
		load = load_slot(reading, event->thread_id);
		if (same_code(load, &map))
			pair(reading, load, &map);
		free(map.entries);
	}
}

/* ModuleLoad and ModuleDCEnd: ModuleID, AssemblyID, ModuleFlags (u32),
 * Reserved1 (u32), then the module's IL path. */
static void keep_module(struct runtime_line_maps_reading *reading,
			const struct nettrace_event *event)
{
	const uint8_t *strings = event->payload + 24;
	size_t remaining = event->payload_size > 24 ? event->payload_size - 24 : 0;
	char path[4096];

	if (reading->module_count == MAX_MODULES ||
	    !nettrace_read_string(&strings, &remaining, path, sizeof(path)) || path[0] != '/')
		return;
	grow_array((void **)&reading->modules, &reading->module_capacity, reading->module_count + 1,
		   sizeof(*reading->modules));
	reading->modules[reading->module_count] =
	    (struct module){payload_u64(event, 0), reading->module_count, xstrdup(path)};
	reading->module_count++;
}

void runtime_line_maps_reading_take(struct runtime_line_maps_reading *reading,
				    const struct nettrace_event *event)
{
	bool rundown = !strcmp(event->provider, RUNDOWN_PROVIDER);

	if (!rundown && strcmp(event->provider, RUNTIME_PROVIDER))
		return;
	if (event->id == (rundown ? RUNDOWN_MODULE_DC_END : RUNTIME_MODULE_LOAD))
		keep_module(reading, event);
	else if (rundown)
		take_rundown(reading, event);
	else
		take_runtime(reading, event);
}

struct runtime_line_maps_reading *runtime_line_maps_reading_start(void)
{
	return xcalloc(1, sizeof(struct runtime_line_maps_reading));
}

static int by_id_then_order(const void *a, const void *b)
{
	const struct module *left = a, *right = b;

	if (left->id != right->id)
		return (left->id > right->id) - (left->id < right->id);
	return (left->order > right->order) - (left->order < right->order);
}

/* The path of module `id`: its latest load's, from the modules sorted. */
static const char *module_path(const struct runtime_line_maps_reading *reading, uint64_t id)
{
	size_t low = 0, high = reading->module_count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (reading->modules[middle].id <= id)
			low = middle + 1;
		else
			high = middle;
	}
	return low && reading->modules[low - 1].id == id ? reading->modules[low - 1].path : NULL;
}

struct managed_lines *runtime_line_maps_reading_finish(struct runtime_line_maps_reading *reading)
{
	struct managed_lines *lines = reading->code_count ? managed_lines_new() : NULL;

	if (reading->module_count) /* qsort takes no NULL array, even empty */
		qsort(reading->modules, reading->module_count, sizeof(*reading->modules),
		      by_id_then_order);
	for (size_t i = 0; i < reading->code_count; i++) {
		const struct mapped_code *code = &reading->code[i];
		const char *path = module_path(reading, code->method.module_id);

		if (lines && path)
			managed_lines_add_code(lines, code->method.start, code->method.size, path,
					       code->method.token, code->entries, code->count);
		free(code->entries);
	}
	if (lines && managed_lines_code_count(lines) == 0) {
		managed_lines_free(lines);
		lines = NULL;
	}
	for (size_t i = 0; i < reading->module_count; i++)
		free(reading->modules[i].path);
	free(reading->rundown_map.entries);
	free(reading->modules);
	free(reading->code);
	free(reading);
	return lines;
}
