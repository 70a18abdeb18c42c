#include "memory_perfmap.h"

#include "lookup_budget.h"
#include "runtime_code_cache.h"
#include "util.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	/* addresses whose lookup the time budget put off, kept at once */
	MAX_DEFERRED = 4096,
};
#define SECOND_NS 1000000000ull

struct memory_perfmap {
	const struct target_process *target;
	struct runtime_code_cache *cache; /* what was found, kept */
	struct lookup_budget budget;	  /* each second's */
	/* addresses the budget left unnamed, with their samples' times: looked
	 * up when a later second has time left */
	struct {
		uint64_t address, time;
	} deferred[MAX_DEFERRED];
	size_t deferred_count;
	FILE *map, *times;
	uint64_t map_bytes, last_time;
	bool for_misses;
	memory_perfmap_named_fn *named_elsewhere; /* with named_context; NULL: none */
	void *named_context;
	/* for the log */
	uint64_t lookups, named, lines, skipped, deferred_named;
};

static uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * SECOND_NS + (uint64_t)now.tv_nsec;
}

bool jit_names_parse(const char *text, enum jit_names *names)
{
	if (!strcmp(text, "auto"))
		*names = JIT_NAMES_AUTO;
	else if (!strcmp(text, "perfmap"))
		*names = JIT_NAMES_PERFMAP;
	else if (!strcmp(text, "memory"))
		*names = JIT_NAMES_MEMORY;
	else
		return false;
	return true;
}

struct memory_perfmap *memory_perfmap_open(const struct target_process *target, char *error,
					   size_t error_size)
{
	struct memory_perfmap *map = xcalloc(1, sizeof(*map));

	map->target = target;
	lookup_budget_init(&map->budget, 1, MEMORY_PERFMAP_LOOKUP_SHARE, MEMORY_PERFMAP_WALL_SHARE);
	if (!(map->cache =
		  runtime_code_cache_open(target->pid, target->root_fd, error, error_size))) {
		free(map);
		return NULL;
	}
	return map;
}

void memory_perfmap_for_misses(struct memory_perfmap *map)
{
	map->for_misses = true;
}

bool memory_perfmap_is_for_misses(const struct memory_perfmap *map)
{
	return map->for_misses;
}

int memory_perfmap_start(struct memory_perfmap *map, const char *dir,
			 memory_perfmap_named_fn *named, void *context)
{
	char *map_path = xasprintf("%s/perf-%d%s.map", dir, (int)map->target->pid,
				   map->for_misses ? ".memory" : "");
	char *times_path = xasprintf("%s.times", map_path);

	map->map = fopen(map_path, "ae");
	map->times = map->map ? fopen(times_path, "ae") : NULL;
	free(map_path);
	free(times_path);
	if (!map->times) {
		if (map->map)
			fclose(map->map);
		map->map = NULL;
		return -1;
	}
	map->named_elsewhere = map->for_misses ? named : NULL;
	map->named_context = context;
	fseek(map->map, 0, SEEK_END);
	map->map_bytes = (uint64_t)ftell(map->map);
	/* Another capture's file may not hold what was known. */
	runtime_code_cache_forget_code(map->cache);
	return 0;
}

/* Appends "0xSTART SIZE NAME", as the runtime writes its perf map, and
 * dates it by `time`. */
static void write_line(struct memory_perfmap *map, uint64_t start, uint64_t end, const char *name,
		       uint64_t time)
{
	int written = fprintf(map->map, "0x%" PRIx64 " %" PRIx64 " %s\n", start, end - start, name);

	if (written <= 0)
		return;
	map->map_bytes += (uint64_t)written;
	if (time > map->last_time)
		map->last_time = time;
	fprintf(map->times, "%" PRIu64 " %" PRIu64 "\n", map->map_bytes, map->last_time);
	map->lines++;
}

static void defer(struct memory_perfmap *map, uint64_t address, uint64_t time)
{
	if (map->deferred_count < MAX_DEFERRED) {
		map->deferred[map->deferred_count].address = address;
		map->deferred[map->deferred_count++].time = time;
	}
}

/* Looks `address` up in the runtime's memory, within this second's time
 * left. One the budget stops is deferred (`late`: it was, and a dynamic
 * method found then is not named: its code may be another's since the
 * sample). */
static void look_up(struct memory_perfmap *map, uint64_t address, uint64_t time, uint64_t now,
		    bool late)
{
	struct runtime_code code;
	enum runtime_code_read read =
	    runtime_code_cache_read(map->cache, address, now, &map->budget, &code);

	map->skipped += read == RUNTIME_CODE_PUT_OFF;
	map->lookups += read != RUNTIME_CODE_PUT_OFF;
	if (read == RUNTIME_CODE_PUT_OFF || read == RUNTIME_CODE_STOPPED)
		defer(map, address, time);
	if (read != RUNTIME_CODE_FOUND || (late && code.dynamic))
		return;
	map->named++;
	map->deferred_named += late;
	if (runtime_code_cache_keep(map->cache, &code, now))
		write_line(map, code.start, code.end, code.name, time);
}

/* Names the code at `address`: `exact` for the leaf, else a return
 * address, which may lie just past its caller's code. */
static void name_address(struct memory_perfmap *map, uint64_t address, bool exact, uint64_t time)
{
	uint64_t lookup = exact ? address : address - 1, now = monotonic_ns();
	struct runtime_code known;

	/* A dynamic method's code may be another's by the next sample: it is
	 * looked up each time (within the budget). */
	if (lookup < 4096 || runtime_code_cache_no_code(map->cache, lookup, now) ||
	    (map->named_elsewhere && map->named_elsewhere(map->named_context, lookup, time)) ||
	    runtime_code_cache_known(map->cache, lookup, now, false, &known))
		return;
	look_up(map, lookup, time, now, false);
}

/* Looks up what the budget put off, while this second has time left. */
static void look_up_deferred(struct memory_perfmap *map)
{
	size_t done = 0, count = map->deferred_count;

	while (done < count && lookup_budget_left(&map->budget)) {
		uint64_t address = map->deferred[done].address, time = map->deferred[done].time;
		uint64_t now = monotonic_ns();
		struct runtime_code known;

		done++;
		if (!runtime_code_cache_no_code(map->cache, address, now) &&
		    !runtime_code_cache_known(map->cache, address, now, false, &known))
			look_up(map, address, time, now, true);
	}
	/* those looked up again and deferred again went to the end */
	memmove(map->deferred, map->deferred + done,
		(map->deferred_count - done) * sizeof(*map->deferred));
	map->deferred_count -= done;
}

void memory_perfmap_sample(struct memory_perfmap *map, const struct perf_sample *sample,
			   const uint64_t *walked, size_t walked_count)
{
	bool user = false, first = true;

	if (!map->map || sample->pid != (uint32_t)map->target->pid)
		return;
	if (map->deferred_count)
		look_up_deferred(map);
	for (size_t i = 0; i < walked_count; i++)
		name_address(map, walked[i], i == 0, sample->time);
	for (uint64_t i = 0; i < sample->callchain_length; i++) {
		uint64_t address = sample->callchain[i];

		if (address >= PERF_CONTEXT_MAX) {
			user = address == PERF_CONTEXT_USER;
			continue;
		}
		if (user) {
			name_address(map, address, first, sample->time);
			first = false;
		}
	}
}

void memory_perfmap_stop(struct memory_perfmap *map, FILE *log)
{
	if (!map->map)
		return;
	fclose(map->map);
	fclose(map->times);
	map->map = map->times = NULL;
	fprintf(log,
		"names from the runtime's memory%s (%s): %" PRIu64 " lookups, %" PRIu64
		" named, %" PRIu64 " perf map lines, %" PRIu64 " reads of its memory, %" PRIu64
		" lookups put off for the time budget (%" PRIu64 " named later, %zu left)\n",
		map->for_misses ? " for what its perf map and jitdump left unnamed" : "",
		runtime_code_cache_runtime_path(map->cache), map->lookups, map->named, map->lines,
		runtime_code_cache_reads(map->cache), map->skipped, map->deferred_named,
		map->deferred_count);
}

void memory_perfmap_free(struct memory_perfmap *map)
{
	if (!map)
		return;
	if (map->map)
		memory_perfmap_stop(map, stderr);
	runtime_code_cache_free(map->cache);
	free(map);
}
