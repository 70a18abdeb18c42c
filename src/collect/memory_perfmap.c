#include "memory_perfmap.h"

#include "runtime_descriptor.h"
#include "runtime_names.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	/* methods known at once; past it, what is found is written but not
	 * kept */
	MAX_KNOWN = 1 << 18,
	/* addresses of no method known at once (a power of two) */
	UNNAMED_SLOTS = 1 << 14,
	/* bytes a lookup may read (it reads some 27 words) */
	LOOKUP_BYTES = 1 << 20,
	/* addresses whose lookup the time budget put off, kept at once */
	MAX_DEFERRED = 4096,
};
#define SECOND_NS 1000000000ull
#define LOOKUP_NS ((uint64_t)(MEMORY_PERFMAP_LOOKUP_SHARE * SECOND_NS))
/* How long found code, and an address of no method, are taken as known
 * before they are looked up again: code other than a dynamic method's is
 * freed only when its assembly is unloaded. */
#define RECHECK_NS (10 * SECOND_NS)

/* A method's code found in the runtime's memory: [start, end) sampled so
 * far, as of `checked` (CLOCK_MONOTONIC), and a hash of its name. */
struct known_code {
	uint64_t start, end, name_hash, checked;
	bool dynamic; /* a dynamic method's, whose code is freed and reused */
};

struct memory_perfmap {
	const struct target_process *target;
	struct runtime_descriptor runtime;
	struct runtime_names *names;
	struct known_code *known; /* by start */
	size_t known_count, known_capacity;
	uint64_t unnamed[UNNAMED_SLOTS]; /* address + 1; 0: free */
	size_t unnamed_count;
	uint64_t unnamed_since;		     /* CLOCK_MONOTONIC */
	uint64_t second_start, second_spent; /* this second's lookups, ns */
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
	uint64_t lookups, named, lines, skipped, reads, deferred_named;
};

static uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * SECOND_NS + (uint64_t)now.tv_nsec;
}

struct memory_perfmap *memory_perfmap_open(const struct target_process *target, char *error,
					   size_t error_size)
{
	struct memory_perfmap *map = xcalloc(1, sizeof(*map));
	struct target_memory memory;

	map->target = target;
	target_memory_init(&memory, target->pid, 4u << 20, 5);
	if (!runtime_descriptor_find(target->pid, &memory, &map->runtime, error, error_size) ||
	    !(map->names =
		  runtime_names_new(map->runtime.contracts, target->root_fd, error, error_size))) {
		memory_perfmap_free(map);
		return NULL;
	}
	map->reads = memory.reads;
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
	map->known_count = 0;
	return 0;
}

/* The known code holding `address`, or NULL. */
static struct known_code *find_known(struct memory_perfmap *map, uint64_t address)
{
	size_t low = 0, high = map->known_count;

	while (low < high) { /* the first start past `address` */
		size_t middle = low + (high - low) / 2;

		if (map->known[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	return low && address < map->known[low - 1].end ? &map->known[low - 1] : NULL;
}

static size_t unnamed_slot(uint64_t address)
{
	return (size_t)((address * 0x9e3779b97f4a7c15ull) >> 50) & (UNNAMED_SLOTS - 1);
}

static bool is_unnamed(const struct memory_perfmap *map, uint64_t address)
{
	for (size_t slot = unnamed_slot(address);; slot = (slot + 1) & (UNNAMED_SLOTS - 1)) {
		if (map->unnamed[slot] == address + 1)
			return true;
		if (!map->unnamed[slot])
			return false;
	}
}

static void add_unnamed(struct memory_perfmap *map, uint64_t address)
{
	size_t slot = unnamed_slot(address);

	if (map->unnamed_count >= UNNAMED_SLOTS / 4 * 3) {
		memset(map->unnamed, 0, sizeof(map->unnamed));
		map->unnamed_count = 0;
	}
	while (map->unnamed[slot])
		slot = (slot + 1) & (UNNAMED_SLOTS - 1);
	map->unnamed[slot] = address + 1;
	map->unnamed_count++;
}

/* FNV-1a: the same name found again at the same start is the same code. */
static uint64_t hash_name(const char *name)
{
	uint64_t hash = 0xcbf29ce484222325ull;

	for (; *name; name++)
		hash = (hash ^ (uint8_t)*name) * 0x100000001b3ull;
	return hash;
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

/* Keeps `found` (code from its start to past `address`), dropping the
 * known code it overlaps: that code was freed, and this is in its place. */
static void keep_known(struct memory_perfmap *map, const struct code_owner *found, uint64_t end,
		       uint64_t name_hash, uint64_t now)
{
	size_t at = 0;

	for (size_t i = 0; i < map->known_count; i++)
		if (map->known[i].end <= found->start || map->known[i].start >= end)
			map->known[at++] = map->known[i];
	map->known_count = at;
	if (map->known_count == MAX_KNOWN)
		return;
	if (map->known_count == map->known_capacity) {
		map->known_capacity = map->known_capacity ? 2 * map->known_capacity : 256;
		map->known = xrealloc(map->known, map->known_capacity * sizeof(*map->known));
	}
	while (at && map->known[at - 1].start > found->start)
		at--;
	memmove(&map->known[at + 1], &map->known[at],
		(map->known_count - at) * sizeof(*map->known));
	map->known[at] =
	    (struct known_code){found->start, end, name_hash, now, found->dynamic_name[0] != '\0'};
	map->known_count++;
}

/* Whether this second has lookup time left. */
static bool time_left(struct memory_perfmap *map, uint64_t now)
{
	if (now - map->second_start >= SECOND_NS) {
		map->second_start = now;
		map->second_spent = 0;
	}
	return map->second_spent < LOOKUP_NS;
}

static void defer(struct memory_perfmap *map, uint64_t address, uint64_t time)
{
	if (map->deferred_count < MAX_DEFERRED) {
		map->deferred[map->deferred_count].address = address;
		map->deferred[map->deferred_count++].time = time;
	}
}

/* Looks `address` up in the runtime's memory, within this second's time
 * left; `end` is how far the code must be known to reach. One the budget
 * stops is deferred (`late`: it was, and a dynamic method found then is
 * not named: its code may be another's since the sample). */
static void look_up(struct memory_perfmap *map, uint64_t address, uint64_t end, uint64_t time,
		    uint64_t now, bool late)
{
	struct target_memory memory;
	struct code_owner owner;
	char name[1024];
	bool found;

	if (now - map->unnamed_since >= RECHECK_NS) {
		map->unnamed_since = now;
		memset(map->unnamed, 0, sizeof(map->unnamed));
		map->unnamed_count = 0;
	}
	if (!time_left(map, now)) {
		map->skipped++;
		defer(map, address, time);
		return;
	}
	target_memory_init(&memory, map->target->pid, LOOKUP_BYTES,
			   (double)(LOOKUP_NS - map->second_spent) / SECOND_NS);
	found =
	    runtime_names_runtime_name(map->names, &memory, address, name, sizeof(name), &owner);
	map->second_spent += monotonic_ns() - now;
	map->lookups++;
	map->reads += memory.reads;
	if (!found) {
		if (!memory.stopped_by)
			add_unnamed(map, address);
		else
			defer(map, address, time);
		return;
	}
	if (late && owner.dynamic_name[0])
		return;
	map->named++;
	map->deferred_named += late;

	uint64_t name_hash = hash_name(name);
	struct known_code *known = find_known(map, owner.start);

	if (known && known->start == owner.start && known->name_hash == name_hash) {
		known->checked = now;
		if (end <= known->end)
			return;
		known->end = end;
	} else {
		keep_known(map, &owner, end, name_hash, now);
	}
	write_line(map, owner.start, end, name, time);
}

/* Names the code at `address`: `exact` for the leaf, else a return
 * address, which may lie just past its caller's code. */
static void name_address(struct memory_perfmap *map, uint64_t address, bool exact, uint64_t time)
{
	uint64_t lookup = exact ? address : address - 1, now;
	struct known_code *known;

	if (lookup < 4096 || is_unnamed(map, lookup) ||
	    (map->named_elsewhere && map->named_elsewhere(map->named_context, lookup, time)))
		return;
	now = monotonic_ns();
	known = find_known(map, lookup);
	/* A dynamic method's code may be another's by the next sample: it is
	 * looked up each time (within the budget). */
	if (known && !known->dynamic && now - known->checked < RECHECK_NS)
		return;
	look_up(map, lookup, lookup + 1, time, now, false);
}

/* Looks up what the budget put off, while this second has time left. */
static void look_up_deferred(struct memory_perfmap *map)
{
	size_t done = 0, count = map->deferred_count;

	while (done < count && time_left(map, monotonic_ns())) {
		uint64_t address = map->deferred[done].address, time = map->deferred[done].time;
		struct known_code *known = find_known(map, address);

		done++;
		if (!is_unnamed(map, address) && !(known && !known->dynamic))
			look_up(map, address, address + 1, time, monotonic_ns(), true);
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
		map->runtime.coreclr_path, map->lookups, map->named, map->lines, map->reads,
		map->skipped, map->deferred_named, map->deferred_count);
}

void memory_perfmap_free(struct memory_perfmap *map)
{
	if (!map)
		return;
	if (map->map)
		memory_perfmap_stop(map, stderr);
	runtime_names_free(map->names);
	runtime_descriptor_release(&map->runtime);
	free(map->known);
	free(map);
}
