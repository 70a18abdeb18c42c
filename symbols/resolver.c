#include "resolver.h"
#include "address_space.h"
#include "target_root.h"

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
	char build_id[BUILD_ID_HEX_MAX];
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
		fd = target_root_openat(config->live_root_fd, path, O_RDONLY);
		if (fd >= 0)
			return fd;
	}
	if (config->capture_dir) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", config->capture_dir,
			 (int)process->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)process->pid);
	return open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

static struct perfmap *load_perfmap(struct resolver *resolver, struct process *process)
{
	if (!process->perfmap_searched) {
		process->perfmap_searched = true;
		process->perfmap_fd = open_perfmap(resolver, process);
		if (process->perfmap_fd >= 0) {
			process->perfmap = perfmap_new();
			perfmap_read_more(process->perfmap, process->perfmap_fd);
		}
		snprintf(process->perfmap_display_path, sizeof(process->perfmap_display_path),
			 "/tmp/perf-%d.map",
			 (int)(process->pid == resolver->config.live_pid
				   ? resolver->config.live_namespace_pid
				   : process->pid));
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
		if (process->perfmap_fd < 0 ||
		    perfmap_read_more(perfmap, process->perfmap_fd) < 0 ||
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
	if (native_symbols_build_id(resolver->native, mapping->path, resolver->build_id))
		location->build_id = resolver->build_id;
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
