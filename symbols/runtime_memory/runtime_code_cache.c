#include "runtime_code_cache.h"

#include "process_maps.h"
#include "runtime_descriptor.h"
#include "runtime_names.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	/* methods known at once; past it, what is read is not kept */
	MAX_KNOWN = 1 << 18,
	/* addresses of no method known at once (a power of two) */
	NO_CODE_SLOTS = 1 << 14,
	/* the process's executable file mappings kept; past it, the rest are
	 * looked up as any address */
	MAX_FILE_RANGES = 8192,
	/* bytes a lookup may read (it reads some 27 words) */
	LOOKUP_BYTES = 1 << 20,
	/* the descriptor: its JSON is about 10 KiB in .NET 10 */
	DESCRIPTOR_BYTES = 4 << 20,
	DESCRIPTOR_SECONDS = 5,
};

/* A method's code read from the runtime's memory: [start, end) asked so
 * far, as of `checked` (CLOCK_MONOTONIC), and its name (malloc'd). */
struct known_code {
	uint64_t start, end, checked;
	char *name;
	bool dynamic;
};

struct runtime_code_cache {
	pid_t pid;
	int root_fd; /* our own copy, which the names' module files are opened in */
	struct runtime_descriptor runtime;
	struct runtime_names *names;
	struct known_code *known; /* by start */
	size_t known_count, known_capacity;
	uint64_t no_code[NO_CODE_SLOTS]; /* address + 1; 0: free */
	size_t no_code_count;
	uint64_t no_code_since; /* CLOCK_MONOTONIC */
	/* the process's code in files (ELF, ReadyToRun images) as of
	 * no_code_since, by address: no method's, named from the files */
	struct file_range {
		uint64_t start, end;
	} * files;
	size_t file_count;
	uint64_t reads;
	char name[4096]; /* of the last code read: as long as runtime_names.c writes */
};

struct runtime_code_cache *runtime_code_cache_open(pid_t pid, int root_fd, char *error,
						   size_t error_size)
{
	struct runtime_code_cache *cache = calloc(1, sizeof(*cache));
	struct target_memory memory;

	if (!cache) {
		snprintf(error, error_size, "out of memory");
		return NULL;
	}
	cache->pid = pid;
	cache->root_fd = root_fd >= 0 ? fcntl(root_fd, F_DUPFD_CLOEXEC, 0) : -1;
	target_memory_init(&memory, pid, DESCRIPTOR_BYTES, DESCRIPTOR_SECONDS);
	if (!runtime_descriptor_find(pid, &memory, &cache->runtime, error, error_size) ||
	    !(cache->names =
		  runtime_names_new(cache->runtime.contracts, cache->root_fd, error, error_size))) {
		runtime_code_cache_free(cache);
		return NULL;
	}
	cache->reads = memory.reads;
	return cache;
}

void runtime_code_cache_forget_code(struct runtime_code_cache *cache)
{
	for (size_t i = 0; i < cache->known_count; i++)
		free(cache->known[i].name);
	cache->known_count = 0;
}

void runtime_code_cache_free(struct runtime_code_cache *cache)
{
	if (!cache)
		return;
	runtime_code_cache_forget_code(cache);
	free(cache->known);
	free(cache->files);
	runtime_names_free(cache->names);
	runtime_descriptor_release(&cache->runtime);
	if (cache->root_fd >= 0)
		close(cache->root_fd);
	free(cache);
}

const char *runtime_code_cache_runtime_path(const struct runtime_code_cache *cache)
{
	return cache->runtime.coreclr_path;
}

uint64_t runtime_code_cache_reads(const struct runtime_code_cache *cache)
{
	return cache->reads;
}

/* The known code holding `address`, or NULL. */
static struct known_code *find_known(struct runtime_code_cache *cache, uint64_t address)
{
	size_t low = 0, high = cache->known_count;

	while (low < high) { /* the first start past `address` */
		size_t middle = low + (high - low) / 2;

		if (cache->known[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	return low && address < cache->known[low - 1].end ? &cache->known[low - 1] : NULL;
}

bool runtime_code_cache_known(struct runtime_code_cache *cache, uint64_t address, uint64_t now,
			      bool dynamic_too, struct runtime_code *code)
{
	struct known_code *known = find_known(cache, address);

	if (!known || (known->dynamic && !dynamic_too) ||
	    now - known->checked >= RUNTIME_CODE_RECHECK_NS)
		return false;
	*code = (struct runtime_code){known->start, known->end, known->name, known->dynamic};
	return true;
}

static size_t no_code_slot(uint64_t address)
{
	return (size_t)((address * 0x9e3779b97f4a7c15ull) >> 50) & (NO_CODE_SLOTS - 1);
}

/* Keeps an executable mapping of a file: not the runtime's own W^X
 * double mapping of its code (a memfd), nor a file deleted since. */
static int keep_file_range(const struct process_mapping *mapping, void *context)
{
	struct runtime_code_cache *cache = context;
	size_t length = strlen(mapping->path);
	static const char deleted[] = " (deleted)";

	if (mapping->permissions[2] != 'x' || mapping->path[0] != '/' ||
	    !strncmp(mapping->path, "/memfd:", 7) ||
	    (length >= sizeof(deleted) - 1 &&
	     !strcmp(mapping->path + length - (sizeof(deleted) - 1), deleted)))
		return 0;
	if (cache->file_count == MAX_FILE_RANGES)
		return 1;
	cache->files[cache->file_count++] = (struct file_range){mapping->start, mapping->end};
	return 0;
}

/* Forgets the addresses of no method once they are RECHECK old, and reads
 * the process's file mappings again. */
static void expire_no_code(struct runtime_code_cache *cache, uint64_t now)
{
	if (now - cache->no_code_since < RUNTIME_CODE_RECHECK_NS)
		return;
	cache->no_code_since = now;
	memset(cache->no_code, 0, sizeof(cache->no_code));
	cache->no_code_count = 0;
	if (!cache->files)
		cache->files = calloc(MAX_FILE_RANGES, sizeof(*cache->files));
	cache->file_count = 0;
	if (cache->files)
		target_process_for_each_mapping(cache->pid, keep_file_range, cache);
}

/* Whether `address` lies in a file the process maps as code. */
static bool in_file(const struct runtime_code_cache *cache, uint64_t address)
{
	size_t low = 0, high = cache->file_count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (address < cache->files[middle].start)
			high = middle;
		else if (address >= cache->files[middle].end)
			low = middle + 1;
		else
			return true;
	}
	return false;
}

bool runtime_code_cache_no_code(struct runtime_code_cache *cache, uint64_t address, uint64_t now)
{
	expire_no_code(cache, now);
	if (in_file(cache, address))
		return true;
	for (size_t slot = no_code_slot(address);; slot = (slot + 1) & (NO_CODE_SLOTS - 1)) {
		if (cache->no_code[slot] == address + 1)
			return true;
		if (!cache->no_code[slot])
			return false;
	}
}

static void add_no_code(struct runtime_code_cache *cache, uint64_t address)
{
	size_t slot = no_code_slot(address);

	if (cache->no_code_count >= NO_CODE_SLOTS / 4 * 3) {
		memset(cache->no_code, 0, sizeof(cache->no_code));
		cache->no_code_count = 0;
	}
	while (cache->no_code[slot])
		slot = (slot + 1) & (NO_CODE_SLOTS - 1);
	cache->no_code[slot] = address + 1;
	cache->no_code_count++;
}

enum runtime_code_read runtime_code_cache_read(struct runtime_code_cache *cache, uint64_t address,
					       uint64_t now, struct lookup_budget *budget,
					       struct runtime_code *code)
{
	struct target_memory memory;
	struct code_owner owner;
	struct lookup_clock began;
	bool found;

	if (!lookup_budget_left(budget))
		return RUNTIME_CODE_PUT_OFF;
	began = lookup_budget_begin();
	expire_no_code(cache, now);
	target_memory_init(&memory, cache->pid, LOOKUP_BYTES, lookup_budget_wall_left(budget));
	found = runtime_names_runtime_name(cache->names, &memory, address, cache->name,
					   sizeof(cache->name), &owner);
	lookup_budget_spend(budget, began);
	cache->reads += memory.reads;
	if (!found) {
		if (memory.stopped_by)
			return RUNTIME_CODE_STOPPED;
		add_no_code(cache, address);
		return RUNTIME_CODE_NONE;
	}
	*code = (struct runtime_code){owner.start, address + 1, cache->name,
				      owner.dynamic_name[0] != '\0'};
	return RUNTIME_CODE_FOUND;
}

/* Drops the known code that overlaps [start, end): it was freed, and other
 * code is in its place. Returns where code of `start` goes. */
static size_t drop_overlapped(struct runtime_code_cache *cache, uint64_t start, uint64_t end)
{
	size_t at = 0;

	for (size_t i = 0; i < cache->known_count; i++)
		if (cache->known[i].end <= start || cache->known[i].start >= end)
			cache->known[at++] = cache->known[i];
		else
			free(cache->known[i].name);
	cache->known_count = at;
	while (at && cache->known[at - 1].start > start)
		at--;
	return at;
}

bool runtime_code_cache_keep(struct runtime_code_cache *cache, struct runtime_code *code,
			     uint64_t now)
{
	struct known_code *known = find_known(cache, code->start);
	size_t at;
	char *name;

	if (known && known->start == code->start && !strcmp(known->name, code->name)) {
		known->checked = now;
		if (code->end <= known->end) {
			code->end = known->end;
			return false;
		}
		known->end = code->end;
		return true;
	}
	at = drop_overlapped(cache, code->start, code->end);
	if (cache->known_count == MAX_KNOWN || !(name = strdup(code->name)))
		return true;
	if (cache->known_count == cache->known_capacity) {
		size_t capacity = cache->known_capacity ? 2 * cache->known_capacity : 256;
		struct known_code *grown = realloc(cache->known, capacity * sizeof(*grown));

		if (!grown) {
			free(name);
			return true;
		}
		cache->known = grown;
		cache->known_capacity = capacity;
	}
	memmove(&cache->known[at + 1], &cache->known[at],
		(cache->known_count - at) * sizeof(*cache->known));
	cache->known[at] = (struct known_code){code->start, code->end, now, name, code->dynamic};
	cache->known_count++;
	return true;
}
