#include "resolver.h"
#include "address_space.h"
#include "symbols_log.h"
#include "target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct process {
	pid_t pid;
	struct address_space *space;
	struct perfmap *perfmap;
	int perfmap_fd; /* to read what the runtime appends later; -1 when done */
	bool perfmap_searched;
	char perfmap_display_path[48]; /* "/tmp/perf-N.map", as perf prints it */
};

struct resolver {
	struct resolver_config config;
	struct native_symbols *native;
	struct process *processes;
	size_t process_count, process_capacity;
	char module_name[256]; /* "[libfoo.so]" for unnamed frames */
};

struct resolver *resolver_new(const struct resolver_config *config)
{
	struct resolver *resolver = calloc(1, sizeof(*resolver));

	if (!resolver)
		return NULL;
	resolver->config = *config;
	resolver->native = native_symbols_new(&config->native);
	return resolver;
}

void resolver_free(struct resolver *resolver)
{
	if (!resolver)
		return;
	for (size_t i = 0; i < resolver->process_count; i++) {
		struct process *process = &resolver->processes[i];

		address_space_free(process->space);
		perfmap_free(process->perfmap);
		if (process->perfmap_fd >= 0)
			close(process->perfmap_fd);
	}
	free(resolver->processes);
	native_symbols_free(resolver->native);
	free(resolver);
}

static struct process *find_process(struct resolver *resolver, pid_t pid)
{
	struct process *process;

	for (size_t i = 0; i < resolver->process_count; i++)
		if (resolver->processes[i].pid == pid)
			return &resolver->processes[i];
	if (resolver->process_count == resolver->process_capacity) {
		size_t capacity = resolver->process_capacity ? resolver->process_capacity * 2 : 8;
		struct process *grown = realloc(resolver->processes, capacity * sizeof(*grown));

		if (!grown)
			abort();
		resolver->processes = grown;
		resolver->process_capacity = capacity;
	}
	process = &resolver->processes[resolver->process_count++];
	*process = (struct process){.pid = pid, .space = address_space_new(), .perfmap_fd = -1};
	return process;
}

void resolver_add_mapping(struct resolver *resolver, pid_t pid, uint64_t start, uint64_t length,
			  uint64_t page_offset, const char *path)
{
	address_space_add(find_process(resolver, pid)->space, start, length, page_offset, path);
}

void resolver_fork(struct resolver *resolver, pid_t child, pid_t parent)
{
	struct address_space *copy = address_space_clone(find_process(resolver, parent)->space);
	struct process *process = find_process(resolver, child);

	address_space_free(process->space);
	process->space = copy;
}

void resolver_exec(struct resolver *resolver, pid_t pid)
{
	struct process *process = find_process(resolver, pid);

	address_space_free(process->space);
	process->space = address_space_new();
}

/* The perf map's sources, best first: the live target's own file, read
 * inside its root; the copy kept in the capture folder; /tmp of this
 * machine (a capture of the real perf record, made here). */
static int open_perfmap(const struct resolver *resolver, const struct process *process)
{
	const struct resolver_config *config = &resolver->config;
	char path[4096];
	int fd;

	if (config->live_pid && process->pid == config->live_pid && config->live_root_fd >= 0) {
		/* Symlinks resolve inside the target's root: safe to follow. */
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)config->live_namespace_pid);
		fd = target_file_open(config->live_root_fd, path, 0);
		if (fd >= 0 || errno == EINVAL)
			return fd; /* EINVAL: a FIFO or device there is never read */
	}
	if (config->capture_dir) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", config->capture_dir,
			 (int)process->pid);
		fd = target_file_open(-1, path, 0);
		if (fd >= 0)
			return fd;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)process->pid);
	return target_file_open(-1, path, O_NOFOLLOW);
}

/* Reads what was appended to the perf map; says in the log when its
 * budget stopped the reading, and reads no more from then on. */
static int read_perfmap(struct resolver *resolver, struct process *process)
{
	const struct target_file_budget *budget = perfmap_read_budget(process->perfmap);
	int status = perfmap_read_more(process->perfmap, process->perfmap_fd);
	char why[96];

	if (budget->stopped_by) {
		symbols_log(resolver->config.native.log,
			    "the perf map of pid %d: %s; JIT code named later is not named",
			    (int)process->pid,
			    target_file_describe_budget(budget, why, sizeof(why)));
		close(process->perfmap_fd);
		process->perfmap_fd = -1;
	}
	return status;
}

static struct perfmap *load_perfmap(struct resolver *resolver, struct process *process)
{
	if (!process->perfmap_searched) {
		process->perfmap_searched = true;
		snprintf(process->perfmap_display_path, sizeof(process->perfmap_display_path),
			 "/tmp/perf-%d.map",
			 (int)(process->pid == resolver->config.live_pid
				   ? resolver->config.live_namespace_pid
				   : process->pid));
		process->perfmap_fd = open_perfmap(resolver, process);
		if (process->perfmap_fd < 0 && errno == EINVAL)
			symbols_log(
			    resolver->config.native.log,
			    "%s of pid %d is not a regular file (a FIFO or device?): not read",
			    process->perfmap_display_path, (int)process->pid);
		if (process->perfmap_fd >= 0) {
			process->perfmap = perfmap_new();
			read_perfmap(resolver, process);
		}
	}
	return process->perfmap;
}

struct perfmap *resolver_perfmap(struct resolver *resolver, pid_t pid)
{
	return load_perfmap(resolver, find_process(resolver, pid));
}

/* Looks the address up in the perf map, reading lines the runtime wrote
 * since the last look (maps grow, and are flushed late). */
static bool lookup_jit(struct resolver *resolver, struct process *process, uint64_t address,
		       struct resolved_location *location)
{
	struct perfmap *perfmap = load_perfmap(resolver, process);
	struct perfmap_entry entry;

	if (!perfmap)
		return false;
	if (!perfmap_lookup(perfmap, address, &entry)) {
		if (process->perfmap_fd < 0 || read_perfmap(resolver, process) < 0 ||
		    !perfmap_lookup(perfmap, address, &entry))
			return false;
	}
	location->kind = FRAME_JIT;
	location->module = process->perfmap_display_path;
	location->frame_count = 1;
	location->frames[0] = (struct resolved_frame){entry.name, address - entry.start, true};
	return true;
}

/* Anonymous memory and .NET's W^X double mapping hold generated code. */
static bool holds_generated_code(const char *path)
{
	return !strcmp(path, "//anon") || !strncmp(path, "/memfd:", 7) ||
	       !strncmp(path, "[anon", 5);
}

static void name_after_module(struct resolver *resolver, struct resolved_location *location,
			      const char *path)
{
	const char *slash = strrchr(path, '/');

	snprintf(resolver->module_name, sizeof(resolver->module_name), "[%s]",
		 slash ? slash + 1 : path);
	location->frame_count = 1;
	location->frames[0] = (struct resolved_frame){resolver->module_name, 0, false};
}

static void lookup_native(struct resolver *resolver, const struct mapping *mapping,
			  uint64_t address, uint64_t lookup_address,
			  struct resolved_location *location)
{
	struct native_frame frames[RESOLVER_MAX_FRAMES];
	size_t count = native_symbols_lookup(resolver->native, mapping->path,
					     lookup_address - mapping->start + mapping->page_offset,
					     frames, RESOLVER_MAX_FRAMES);

	location->kind = FRAME_NATIVE;
	location->module = mapping->path;
	if (count == 0) {
		name_after_module(resolver, location, mapping->path);
		return;
	}
	location->frame_count = count;
	for (size_t i = 0; i < count; i++)
		location->frames[i] = (struct resolved_frame){
		    frames[i].function ? frames[i].function : "[unknown]",
		    frames[i].offset + (address - lookup_address), frames[i].function != NULL};
}

void resolver_resolve(struct resolver *resolver, pid_t pid, uint64_t address, bool kernel,
		      bool return_address, struct resolved_location *location)
{
	/* A return address may already lie past the end of the caller (after
	 * a call to a function that never returns): look up the call itself. */
	uint64_t lookup_address = return_address ? address - 1 : address;
	struct process *process = find_process(resolver, pid);
	const struct mapping *mapping;

	*location = (struct resolved_location){
	    .module = "[unknown]", .kind = FRAME_UNKNOWN, .frame_count = 1};
	location->frames[0] = (struct resolved_frame){"[unknown]", 0, false};
	if (kernel) {
		struct native_frame frame;

		location->kind = FRAME_KERNEL;
		location->module = "[kernel.kallsyms]";
		if (native_symbols_lookup_kernel(resolver->native, lookup_address, &frame) &&
		    frame.function)
			location->frames[0] = (struct resolved_frame){
			    frame.function, frame.offset + (address - lookup_address), true};
		return;
	}
	mapping = address_space_find(process->space, lookup_address);
	if (!mapping || holds_generated_code(mapping->path)) {
		if (lookup_jit(resolver, process, lookup_address, location))
			location->frames[0].offset += address - lookup_address;
		else if (mapping)
			location->module = mapping->path;
		return;
	}
	lookup_native(resolver, mapping, address, lookup_address, location);
}

bool resolver_return_address(struct resolver *resolver, pid_t pid, uint64_t address,
			     const uint8_t *stack, size_t size, uint64_t *return_address)
{
	struct address_space *space = find_process(resolver, pid)->space;
	const struct mapping *mapping = address_space_find(space, address);

	if (!mapping || holds_generated_code(mapping->path) ||
	    !native_symbols_return_address(resolver->native, mapping->path,
					   address - mapping->start + mapping->page_offset, stack,
					   size, return_address))
		return false;
	/* A slot that holds no return address rarely points into code. */
	return *return_address != 0 && address_space_find(space, *return_address - 1);
}
