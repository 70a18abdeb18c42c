#include "resolver.h"
#include "address_space.h"
#include "code_cache.h"
#include "managed_images.h"
#include "runtime_directories.h"
#include "symbols_log.h"
#include "target_file.h"
#include "target_root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A jitdump is read up to this size: a file that never ends is the target's
 * doing. A busy ASP.NET Core service's is a few MB. */
#define JITDUMP_READ_LIMIT (256ull << 20)

/* A long-lived resolver (resolver_next_capture) frees the ELF files no
 * capture asked about in this many captures, and reads its .NET images
 * anew after this many: a redeployed service may bring another file at
 * the same path. */
#define UNUSED_CAPTURES_KEPT	4
#define MANAGED_IMAGES_CAPTURES 20

struct process {
	pid_t pid;
	struct address_space *space;
	struct perfmap *perfmap;
	int perfmap_fd; /* to read what the runtime appends later; -1 when done */
	bool perfmap_searched;
	char perfmap_display_path[48]; /* "/tmp/perf-N.map", as perf prints it */
	struct jitdump *jitdump;
	int jitdump_fd; /* to read what the runtime appends later; -1 when done */
	bool jitdump_searched;
	/* a capture's names from the runtime's memory of the code its perf
	 * map and jitdump left unnamed (perf-<pid>.memory.map) */
	struct perfmap *memory_names;
	bool memory_names_searched;
	struct code_ranges *runtime_methods; /* the runtime's method events */
	struct managed_lines *managed_lines; /* their code's lines, by IL offset */
	uint64_t code_generation;	     /* of its mappings, in code_cache */
};

struct resolver {
	struct resolver_config config;
	struct native_symbols *native;
	bool native_borrowed;		/* config.native_symbols: freed by its owner */
	struct managed_images *managed; /* precompiled .NET code, named from its files */
	bool managed_borrowed;		/* config.managed_images: freed by its owner */
	struct process *processes;
	size_t process_count, process_capacity;
	/* Open addressing by pid over processes: index + 1, 0 when empty. A
	 * capture of every process asks for hundreds of pids, sample by
	 * sample. */
	uint32_t *slots;
	size_t slot_count;     /* a power of two, at least twice process_count */
	char module_name[256]; /* "[libfoo.so]" for unnamed frames */
	char stub_name[512];   /* "[stub] ..." */
	uint64_t time;	       /* of the addresses asked for */
	char build_id[BUILD_ID_HEX_MAX];
	struct code_cache *code_cache; /* resolver_code_at's answers; NULL: none kept */
	unsigned captures;	       /* resolver_next_capture's calls */
};

static struct native_symbols_config native_config(const struct resolver_config *config)
{
	struct native_symbols_config native = config->native;

	native.live_pid = config->live_pid;
	native.capture_dir = config->capture_dir;
	return native;
}

struct native_symbols *resolver_native_symbols_new(const struct resolver_config *config)
{
	struct native_symbols_config native = native_config(config);

	return native_symbols_new(&native);
}

struct resolver *resolver_new(const struct resolver_config *config)
{
	struct resolver *resolver = calloc(1, sizeof(*resolver));

	if (!resolver)
		return NULL;
	resolver->config = *config;
	resolver->config.native = native_config(config);
	resolver->native_borrowed = config->native_symbols != NULL;
	resolver->native = resolver->native_borrowed ? config->native_symbols
						     : native_symbols_new(&resolver->config.native);
	resolver->code_cache = code_cache_new();
	/* PROFCPU_NO_READYTORUN=1 leaves precompiled .NET code to the runtime's
	 * own files (jitdump): for comparisons, or against a misleading image. */
	if (!getenv("PROFCPU_NO_READYTORUN")) {
		resolver->managed_borrowed = config->managed_images != NULL;
		resolver->managed = resolver->managed_borrowed
					? config->managed_images
					: managed_images_new(config->native.target_root_fd);
	}
	return resolver;
}

/* A new process under `process`'s pid (a reused pid, an exec): the perf
 * map and jitdump read so far were another program's; its own are looked
 * for when first needed. What the caller gave (runtime methods, lines)
 * stays. */
static void forget_runtime_files(struct process *process)
{
	perfmap_free(process->perfmap);
	jitdump_free(process->jitdump);
	perfmap_free(process->memory_names);
	process->memory_names = NULL;
	process->memory_names_searched = false;
	if (process->perfmap_fd >= 0)
		close(process->perfmap_fd);
	if (process->jitdump_fd >= 0)
		close(process->jitdump_fd);
	process->perfmap = NULL;
	process->jitdump = NULL;
	process->perfmap_fd = process->jitdump_fd = -1;
	process->perfmap_searched = process->jitdump_searched = false;
}

static void process_free(struct process *process)
{
	address_space_free(process->space);
	forget_runtime_files(process);
	code_ranges_free(process->runtime_methods);
	managed_lines_free(process->managed_lines);
}

void resolver_free(struct resolver *resolver)
{
	if (!resolver)
		return;
	for (size_t i = 0; i < resolver->process_count; i++)
		process_free(&resolver->processes[i]);
	free(resolver->processes);
	free(resolver->slots);
	managed_images_report(resolver->managed, resolver->config.native.log);
	if (!resolver->managed_borrowed)
		managed_images_free(resolver->managed);
	if (!resolver->native_borrowed)
		native_symbols_free(resolver->native);
	code_cache_free(resolver->code_cache);
	free(resolver);
}

static size_t slot_of(const struct resolver *resolver, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (resolver->slot_count - 1);
}

/* Indexes every process anew, in `slot_count` slots. */
static void rebuild_index(struct resolver *resolver, size_t slot_count)
{
	free(resolver->slots);
	resolver->slots = calloc(slot_count, sizeof(*resolver->slots));
	if (!resolver->slots)
		abort();
	resolver->slot_count = slot_count;
	for (size_t i = 0; i < resolver->process_count; i++) {
		size_t slot = slot_of(resolver, resolver->processes[i].pid);

		while (resolver->slots[slot])
			slot = (slot + 1) & (slot_count - 1);
		resolver->slots[slot] = (uint32_t)i + 1;
	}
}

/* The process's mappings are new or changed: resolver_code_at's answers
 * about it are asked again. */
static void forget_code(struct resolver *resolver, struct process *process)
{
	if (resolver->code_cache)
		process->code_generation = code_cache_new_generation(resolver->code_cache);
}

static struct process *find_process(struct resolver *resolver, pid_t pid)
{
	struct process *process;

	for (size_t slot = resolver->slot_count ? slot_of(resolver, pid) : 0;
	     resolver->slot_count && resolver->slots[slot];
	     slot = (slot + 1) & (resolver->slot_count - 1))
		if (resolver->processes[resolver->slots[slot] - 1].pid == pid)
			return &resolver->processes[resolver->slots[slot] - 1];
	if (resolver->process_count == resolver->process_capacity) {
		size_t capacity = resolver->process_capacity ? resolver->process_capacity * 2 : 8;
		struct process *grown = realloc(resolver->processes, capacity * sizeof(*grown));

		if (!grown)
			abort();
		resolver->processes = grown;
		resolver->process_capacity = capacity;
	}
	process = &resolver->processes[resolver->process_count++];
	*process = (struct process){
	    .pid = pid, .space = address_space_new(), .perfmap_fd = -1, .jitdump_fd = -1};
	forget_code(resolver, process);
	if (resolver->slot_count < 2 * resolver->process_count) {
		rebuild_index(resolver, 2 * resolver->process_capacity); /* a power of two */
	} else {
		size_t slot = slot_of(resolver, pid);

		while (resolver->slots[slot])
			slot = (slot + 1) & (resolver->slot_count - 1);
		resolver->slots[slot] = (uint32_t)resolver->process_count;
	}
	return process;
}

void resolver_add_mapping(struct resolver *resolver, pid_t pid, uint64_t start, uint64_t length,
			  uint64_t page_offset, const struct mapped_file *file)
{
	struct process *process = find_process(resolver, pid);

	address_space_add(process->space, start, length, page_offset, file);
	forget_code(resolver, process);
}

/* Frees process `index`; the last one takes its place (rebuild_index()
 * after). */
static void remove_process(struct resolver *resolver, size_t index)
{
	process_free(&resolver->processes[index]);
	resolver->processes[index] = resolver->processes[--resolver->process_count];
}

void resolver_forget_process(struct resolver *resolver, pid_t pid)
{
	for (size_t i = 0; i < resolver->process_count; i++)
		if (resolver->processes[i].pid == pid) {
			remove_process(resolver, i);
			rebuild_index(resolver, resolver->slot_count);
			break;
		}
}

void resolver_next_capture(struct resolver *resolver)
{
	for (size_t i = 0; i < resolver->process_count;) {
		struct process *process = &resolver->processes[i];

		/* Without runtime files found, they are looked for again: a
		 * .NET process may have been asked to write them since. */
		if (!process->perfmap && !process->jitdump && !process->runtime_methods) {
			remove_process(resolver, i);
			continue;
		}
		address_space_free(process->space);
		process->space = address_space_new();
		forget_code(resolver, process);
		if (process->jitdump_fd >= 0)
			jitdump_read_more(process->jitdump, process->jitdump_fd,
					  JITDUMP_READ_LIMIT);
		i++;
	}
	if (resolver->slot_count)
		rebuild_index(resolver, resolver->slot_count);
	native_symbols_forget_unused(resolver->native, UNUSED_CAPTURES_KEPT);
	if (++resolver->captures % MANAGED_IMAGES_CAPTURES == 0 && resolver->managed &&
	    !resolver->managed_borrowed) {
		managed_images_report(resolver->managed, resolver->config.native.log);
		managed_images_free(resolver->managed);
		resolver->managed = managed_images_new(resolver->config.native.target_root_fd);
	}
}

void resolver_fork(struct resolver *resolver, pid_t child, pid_t parent)
{
	struct address_space *copy = address_space_clone(find_process(resolver, parent)->space);
	struct process *process = find_process(resolver, child);

	address_space_free(process->space);
	process->space = copy;
	forget_runtime_files(process);
	forget_code(resolver, process);
}

void resolver_exec(struct resolver *resolver, pid_t pid)
{
	struct process *process = find_process(resolver, pid);

	address_space_free(process->space);
	process->space = address_space_new();
	forget_runtime_files(process);
	forget_code(resolver, process);
}

/* Whether `pid` may still run and write its runtime files: the live
 * target, or any process of a capture of several (collect -a, --cgroup). */
static bool is_live(const struct resolver_config *config, pid_t pid)
{
	return config->live_every_process || (config->live_pid && pid == config->live_pid);
}

/* Opens a runtime's file NAME_PATTERN (made with the pid), best source
 * first: the copy kept in the capture folder (made while sampling, with
 * what was unloaded since); a live process's own file (in its /tmp, or
 * where DOTNET_PerfMapJitDumpPath says), named with the pid it sees itself by and read inside its
 * root (symlinks resolve inside it: safe to follow), never this machine's; /tmp of this machine (a
 * capture of the real perf record, made here). Sets *from_capture when the
 * copy was opened. A FIFO or device is never read (EINVAL). */
static int open_runtime_file(const struct resolver *resolver, const struct process *process,
			     const char *name_pattern, bool *from_capture)
{
	const struct resolver_config *config = &resolver->config;
	char name[64], path[PATH_MAX + 64];
	int fd, root_fd;

	*from_capture = false;
	if (config->capture_dir) {
		snprintf(name, sizeof(name), name_pattern, (int)process->pid);
		snprintf(path, sizeof(path), "%s/%s", config->capture_dir, name);
		fd = target_file_open(-1, path, 0);
		if (fd >= 0) {
			*from_capture = true;
			return fd;
		}
	}
	if (is_live(config, process->pid) && (root_fd = target_root_open(process->pid)) >= 0) {
		char directory[PATH_MAX];

		runtime_perfmap_directory(process->pid, directory, sizeof(directory));
		snprintf(name, sizeof(name), name_pattern,
			 (int)target_root_namespace_pid(process->pid));
		snprintf(path, sizeof(path), "%s/%s", directory, name);
		fd = target_file_open(root_fd, path, 0);
		close(root_fd);
		return fd;
	}
	snprintf(name, sizeof(name), name_pattern, (int)process->pid);
	snprintf(path, sizeof(path), "/tmp/%s", name);
	return target_file_open(-1, path, O_NOFOLLOW);
}

/* Reads the perf map copy of a capture in the pieces its times file says
 * were seen together ("BYTES NANOSECONDS" per line: by that time the map
 * had that many bytes), so that each line is valid from when it appeared.
 * Lines past the last piece appeared after sampling ended. */
static void read_timed_perfmap(struct perfmap *perfmap, int fd, const char *times_path)
{
	FILE *times = fopen(times_path, "re");
	unsigned long long seen, time;
	uint64_t read_so_far = 0;
	char buffer[65536];

	if (!times)
		return;
	while (fscanf(times, "%llu %llu", &seen, &time) == 2 && seen >= read_so_far) {
		perfmap_set_time(perfmap, time);
		while (read_so_far < seen) {
			size_t wanted = seen - read_so_far < sizeof(buffer)
					    ? (size_t)(seen - read_so_far)
					    : sizeof(buffer);
			ssize_t n = read(fd, buffer, wanted);

			if (n <= 0)
				break;
			perfmap_add_text(perfmap, buffer, (size_t)n);
			read_so_far += (uint64_t)n;
		}
	}
	perfmap_set_time(perfmap, UINT64_MAX);
	fclose(times);
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
		bool from_capture;

		process->perfmap_searched = true;
		snprintf(process->perfmap_display_path, sizeof(process->perfmap_display_path),
			 "/tmp/perf-%d.map",
			 (int)(process->pid == resolver->config.live_pid
				   ? resolver->config.live_namespace_pid
				   : process->pid));
		process->perfmap_fd =
		    open_runtime_file(resolver, process, "perf-%d.map", &from_capture);
		if (process->perfmap_fd < 0 && errno == EINVAL)
			symbols_log(
			    resolver->config.native.log,
			    "%s of pid %d is not a regular file (a FIFO or device?): not read",
			    process->perfmap_display_path, (int)process->pid);
		if (process->perfmap_fd >= 0 && (process->perfmap = perfmap_new())) {
			if (from_capture) {
				char *times = NULL;

				if (asprintf(&times, "%s/perf-%d.map.times",
					     resolver->config.capture_dir, (int)process->pid) > 0)
					read_timed_perfmap(process->perfmap, process->perfmap_fd,
							   times);
				free(times);
			}
			read_perfmap(resolver, process);
		}
	}
	return process->perfmap;
}

/* The capture's perf-<pid>.memory.map (memory_perfmap.h), read whole with
 * its times: collect writes it beside the runtime's own perf map and
 * jitdump, for the code they leave unnamed. */
static struct perfmap *load_memory_names(struct resolver *resolver, struct process *process)
{
	char path[PATH_MAX + 64];
	int fd;

	if (process->memory_names_searched || !resolver->config.capture_dir)
		return process->memory_names;
	process->memory_names_searched = true;
	snprintf(path, sizeof(path), "%s/perf-%d.memory.map", resolver->config.capture_dir,
		 (int)process->pid);
	if ((fd = target_file_open(-1, path, 0)) < 0)
		return NULL;
	if ((process->memory_names = perfmap_new())) {
		strcat(path, ".times");
		read_timed_perfmap(process->memory_names, fd, path);
	}
	close(fd);
	return process->memory_names;
}

/* A lent jitdump (config.jitdump) once it has read a jitdump's header. */
static struct jitdump *borrowed_jitdump(const struct resolver *resolver)
{
	struct jitdump_summary summary;

	jitdump_summarize(resolver->config.jitdump.jitdump, &summary);
	return summary.valid ? resolver->config.jitdump.jitdump : NULL;
}

static bool is_borrowed_jitdump(const struct resolver *resolver, const struct process *process)
{
	return resolver->config.jitdump.jitdump && process->pid == resolver->config.jitdump.pid;
}

/* The jitdump, read whole when first needed: the copy in a capture folder
 * is complete; a live one grows while sampling (resolver_read_more_jitdump). */
static struct jitdump *load_jitdump(struct resolver *resolver, struct process *process)
{
	if (is_borrowed_jitdump(resolver, process))
		return borrowed_jitdump(resolver);
	if (!process->jitdump_searched) {
		bool from_capture, keep_open = false;
		int fd = open_runtime_file(resolver, process, "jit-%d.dump", &from_capture);
		struct stat status;

		process->jitdump_searched = true;
		if (fd < 0)
			return NULL;
		if (fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
		    (process->jitdump = jitdump_new())) {
			jitdump_read_more(process->jitdump, fd, JITDUMP_READ_LIMIT);
			keep_open = !from_capture; /* a live one grows while sampling */
		}
		if (keep_open)
			process->jitdump_fd = fd;
		else
			close(fd);
	}
	return process->jitdump;
}

bool resolver_read_more_jitdump(struct resolver *resolver, pid_t pid)
{
	struct process *process = find_process(resolver, pid);
	const struct borrowed_jitdump *lent = &resolver->config.jitdump;

	if (is_borrowed_jitdump(resolver, process))
		return lent->read_more ? lent->read_more(lent->context, resolver->time)
				       : borrowed_jitdump(resolver) != NULL;
	if (!process->jitdump_searched)
		return load_jitdump(resolver, process) != NULL;
	if (!process->jitdump)
		return false;
	/* A capture's copy was read whole. */
	return process->jitdump_fd < 0 ||
	       jitdump_read_more(process->jitdump, process->jitdump_fd, JITDUMP_READ_LIMIT) == 0;
}

void resolver_add_runtime_methods(struct resolver *resolver, pid_t pid, struct code_ranges *methods)
{
	struct process *process = find_process(resolver, pid);

	code_ranges_free(process->runtime_methods);
	process->runtime_methods = methods;
}

/* `lines` become `process`'s, their PDBs read inside the target's root. */
static void set_managed_lines(struct resolver *resolver, struct process *process,
			      struct managed_lines *lines)
{
	managed_lines_free(process->managed_lines);
	process->managed_lines = lines;
	managed_lines_read_files_in(lines, resolver->config.native.target_root_fd,
				    resolver->config.native.log);
}

void resolver_add_managed_lines(struct resolver *resolver, pid_t pid, struct managed_lines *lines)
{
	set_managed_lines(resolver, find_process(resolver, pid), lines);
}

struct perfmap *resolver_perfmap(struct resolver *resolver, pid_t pid)
{
	return load_perfmap(resolver, find_process(resolver, pid));
}

void resolver_finish_kernel_symbols_copy(struct resolver *resolver)
{
	native_symbols_finish_kernel_copy(resolver->native);
}

/* "stub<1> NAME" (perf map) and "stub NAME" (jitdump): runtime stubs,
 * precode and JIT helpers, shown as "[stub] NAME". */
static const char *display_jit_name(struct resolver *resolver, const char *name)
{
	if (strncmp(name, "stub", 4) || (name[4] != ' ' && name[4] != '<'))
		return name;
	name += 4;
	if (*name == '<')
		name += strcspn(name, ">") + (strchr(name, '>') ? 1 : 0);
	name += strspn(name, " ");
	snprintf(resolver->stub_name, sizeof(resolver->stub_name), "[stub] %s", name);
	return resolver->stub_name;
}

/* Names generated code at the resolver's time: the jitdump first (its
 * records are timed to the nanosecond and cover ReadyToRun code), then the
 * perf map, read again on a miss (maps grow, and are flushed late), then
 * what collect found in the runtime's memory for the code both left
 * unnamed, then the runtime's method events, then (`ask_namer`: code
 * outside the mapped files) the configuration's namer. */
static bool lookup_jit(struct resolver *resolver, struct process *process, uint64_t address,
		       bool ask_namer, struct resolved_location *location)
{
	const struct jit_namer *namer = &resolver->config.jit_namer;
	struct jitdump *jitdump = load_jitdump(resolver, process);
	struct perfmap *perfmap = load_perfmap(resolver, process), *memory_names;
	struct code_range range = {.valid_until = UINT64_MAX}, method = {.valid_until = UINT64_MAX};
	struct perfmap_entry entry = {.valid_until = UINT64_MAX};
	const char *name = NULL;
	uint64_t start = 0;

	if (jitdump && jitdump_lookup(jitdump, address, resolver->time, &range)) {
		name = range.name;
		start = range.start;
	} else if (perfmap && (perfmap_lookup_at(perfmap, address, resolver->time, &entry) ||
			       (process->perfmap_fd >= 0 && read_perfmap(resolver, process) == 0 &&
				perfmap_lookup_at(perfmap, address, resolver->time, &entry)))) {
		name = entry.name;
		start = entry.start;
	} else if ((memory_names = load_memory_names(resolver, process)) &&
		   perfmap_lookup_at(memory_names, address, resolver->time, &entry)) {
		name = entry.name;
		start = entry.start;
	} else if (process->runtime_methods &&
		   code_ranges_lookup(process->runtime_methods, address, resolver->time, &method)) {
		name = method.name;
		start = method.start;
	} else if (ask_namer && namer->name &&
		   namer->name(namer->context, process->pid, address, resolver->time, &method)) {
		name = method.name;
		start = method.start;
	}
	location->valid_until =
	    range.valid_until < entry.valid_until ? range.valid_until : entry.valid_until;
	if (method.valid_until < location->valid_until)
		location->valid_until = method.valid_until;
	if (!name)
		return false;
	location->kind = FRAME_JIT;
	location->module = process->perfmap_display_path;
	location->frame_count = 1;
	location->frames[0] = (struct resolved_frame){
	    .function = display_jit_name(resolver, name), .offset = address - start, .named = true};
	if (process->managed_lines)
		managed_lines_lookup(process->managed_lines, address, &location->frames[0].line);
	return true;
}

/* Anonymous memory and .NET's W^X double mapping hold generated code. */
static bool holds_generated_code(const char *path)
{
	return !strcmp(path, "//anon") || !strncmp(path, "/memfd:", 7) ||
	       !strncmp(path, "[anon", 5);
}

/* A .NET assembly (a PE file, mapped by the runtime), whose ReadyToRun
 * code the jitdump or the assembly itself names. */
static bool is_managed_image(const char *path)
{
	size_t length = strlen(path);

	return length > 4 && !strcasecmp(path + length - 4, ".dll");
}

static void name_after_module(struct resolver *resolver, struct resolved_location *location,
			      const char *path)
{
	const char *slash = strrchr(path, '/');

	snprintf(resolver->module_name, sizeof(resolver->module_name), "[%s]",
		 slash ? slash + 1 : path);
	location->frame_count = 1;
	location->frames[0] =
	    (struct resolved_frame){.function = resolver->module_name, .offset = 0, .named = false};
}

/* Precompiled (ReadyToRun) code in a .NET assembly the runtime mapped,
 * named from the assembly itself. */
static bool lookup_managed_image(struct resolver *resolver, const struct mapping *mapping,
				 uint64_t address, uint64_t lookup_address,
				 struct resolved_location *location)
{
	const char *name;
	uint64_t offset;

	if (!resolver->managed ||
	    !managed_images_lookup(resolver->managed, mapping->path,
				   lookup_address - mapping->start + mapping->page_offset, &name,
				   &offset))
		return false;
	location->kind = FRAME_JIT;
	location->module = mapping->path;
	location->frame_count = 1;
	location->frames[0] = (struct resolved_frame){
	    .function = name, .offset = offset + (address - lookup_address), .named = true};
	return true;
}

/* The process to open a mapped file through when its path fails: each
 * process of a live capture of every process; 0 otherwise (the native
 * symbols' live target, or none). */
static pid_t live_process(const struct resolver *resolver, const struct process *process)
{
	return resolver->config.live_every_process ? process->pid : 0;
}

/* The source line of precompiled code at `lookup_address` in the image
 * `mapping` maps, when the runtime's maps gave it none: its IL offset from
 * the image's debug info, its line from its assembly's PDB (the image's
 * own, or a composite image's component's). The PDB is looked for first:
 * an assembly without one (the framework's) has its debug info left
 * unread. */
static void add_precompiled_line(struct resolver *resolver, struct process *process,
				 const struct mapping *mapping, uint64_t lookup_address,
				 struct resolved_frame *frame)
{
	uint64_t file_offset = lookup_address - mapping->start + mapping->page_offset;
	struct managed_lines *no_runtime_maps;
	uint32_t method_token, il_offset;
	char assembly[PATH_MAX];

	if (frame->line.file || !resolver->managed)
		return;
	if (!process->managed_lines) {
		if (!(no_runtime_maps = managed_lines_new()))
			return;
		set_managed_lines(resolver, process, no_runtime_maps);
	}
	if (managed_images_lines_assembly(resolver->managed, mapping->path, file_offset, assembly,
					  sizeof(assembly)) &&
	    managed_lines_has_pdb(process->managed_lines, assembly) &&
	    managed_images_il_offset(resolver->managed, mapping->path, file_offset, &method_token,
				     &il_offset))
		managed_lines_lookup_il(process->managed_lines, assembly, method_token, il_offset,
					&frame->line);
}

static void lookup_native(struct resolver *resolver, struct process *process,
			  const struct mapping *mapping, uint64_t address, uint64_t lookup_address,
			  struct resolved_location *location)
{
	struct native_frame frames[RESOLVER_MAX_FRAMES];
	struct mapped_file file = {mapping->path, mapping->identity,
				   live_process(resolver, process)};
	size_t count;

	if (is_managed_image(mapping->path)) {
		/* ReadyToRun code, mapped from its .dll: the jitdump's
		 * [PreJIT] records name what the runtime has prepared, the
		 * image itself names the rest (no jitdump, or not whole). */
		if (lookup_jit(resolver, process, lookup_address, false, location)) {
			location->frames[0].offset += address - lookup_address;
			add_precompiled_line(resolver, process, mapping, lookup_address,
					     &location->frames[0]);
			return;
		}
		if (lookup_managed_image(resolver, mapping, address, lookup_address, location)) {
			add_precompiled_line(resolver, process, mapping, lookup_address,
					     &location->frames[0]);
			return;
		}
	}
	count = native_symbols_lookup(resolver->native, &file,
				      lookup_address - mapping->start + mapping->page_offset,
				      frames, RESOLVER_MAX_FRAMES);
	/* Code the file's symbols do not name may be ReadyToRun code of an
	 * assembly inside a single-file app's executable, which the runtime
	 * maps from there: the jitdump's [PreJIT] records name it, or else
	 * the assembly itself, read from the executable. */
	if (count == 0 && lookup_jit(resolver, process, lookup_address, false, location)) {
		location->frames[0].offset += address - lookup_address;
		return;
	}
	if (count == 0 &&
	    lookup_managed_image(resolver, mapping, address, lookup_address, location)) {
		add_precompiled_line(resolver, process, mapping, lookup_address,
				     &location->frames[0]);
		return;
	}
	location->kind = FRAME_NATIVE;
	location->module = mapping->path;
	if (native_symbols_build_id(resolver->native, &file, resolver->build_id))
		location->build_id = resolver->build_id;
	if (count == 0) {
		name_after_module(resolver, location, mapping->path);
		return;
	}
	location->frame_count = count;
	for (size_t i = 0; i < count; i++)
		location->frames[i] = (struct resolved_frame){
		    .function = frames[i].function ? frames[i].function : "[unknown]",
		    .offset = frames[i].offset + (address - lookup_address),
		    .named = frames[i].function != NULL,
		    .line = frames[i].line,
		};
}

void resolver_set_time(struct resolver *resolver, uint64_t time)
{
	resolver->time = time;
}

void resolver_resolve(struct resolver *resolver, pid_t pid, uint64_t address, bool kernel,
		      bool return_address, struct resolved_location *location)
{
	/* A return address may already lie past the end of the caller (after
	 * a call to a function that never returns): look up the call itself. */
	uint64_t lookup_address = return_address ? address - 1 : address;
	struct process *process = find_process(resolver, pid);
	const struct mapping *mapping;

	*location = (struct resolved_location){.module = "[unknown]",
					       .kind = FRAME_UNKNOWN,
					       .frame_count = 1,
					       .valid_until = UINT64_MAX};
	location->frames[0] =
	    (struct resolved_frame){.function = "[unknown]", .offset = 0, .named = false};
	if (kernel) {
		struct native_frame frame;

		location->kind = FRAME_KERNEL;
		location->module = "[kernel.kallsyms]";
		if (native_symbols_lookup_kernel(resolver->native, lookup_address, &frame) &&
		    frame.function)
			location->frames[0] = (struct resolved_frame){
			    .function = frame.function,
			    .offset = frame.offset + (address - lookup_address),
			    .named = true};
		return;
	}
	mapping = address_space_find(process->space, lookup_address);
	if (!mapping || holds_generated_code(mapping->path)) {
		if (lookup_jit(resolver, process, lookup_address, true, location)) {
			location->frames[0].offset += address - lookup_address;
			if (return_address && process->managed_lines &&
			    !location->frames[0].line.file)
				managed_lines_lookup_return(process->managed_lines, address,
							    &location->frames[0].line);
		} else if (mapping) {
			/* Generated code no map names: the module [JIT], not a
			 * path such as "/memfd:doublemapper (deleted)" whose
			 * space and parentheses perf-script parsers split. */
			location->kind = FRAME_JIT;
			location->module = "[JIT]";
			location->frames[0].function = "[JIT]";
		}
		return;
	}
	lookup_native(resolver, process, mapping, address, lookup_address, location);
}

static void find_code(struct resolver *resolver, struct process *process, uint64_t address,
		      struct code_at *code)
{
	const struct mapping *mapping = address_space_find(process->space, address);
	uint64_t file_offset;

	*code = (struct code_at){.kind = CODE_UNMAPPED};
	if (!mapping || holds_generated_code(mapping->path)) {
		struct jitdump *jitdump = load_jitdump(resolver, process);

		/* Code the jitdump or the perf map names, whatever the mappings
		 * say; the jitdump's copy keeps each method's prolog. */
		if (jitdump && jitdump_unwind_at(jitdump, address, resolver->time, &code->unwind))
			code->kind = CODE_GENERATED;
		else if (mapping ||
			 (load_perfmap(resolver, process) &&
			  perfmap_lookup(process->perfmap, address, &(struct perfmap_entry){0})))
			code->kind = CODE_GENERATED;
		return;
	}
	file_offset = address - mapping->start + mapping->page_offset;
	/* ReadyToRun code: each method's unwind info, from the image. */
	if (is_managed_image(mapping->path)) {
		code->kind =
		    resolver->managed && managed_images_unwind_at(resolver->managed, mapping->path,
								  file_offset, &code->unwind)
			? CODE_PRECOMPILED
			: CODE_WITHOUT_CFI;
		return;
	}
	code->cfi =
	    native_symbols_call_frame_info(resolver->native,
					   &(struct mapped_file){mapping->path, mapping->identity,
								 live_process(resolver, process)},
					   file_offset, &code->file_address);
	code->kind = code->cfi ? CODE_WITH_CFI : CODE_WITHOUT_CFI;
	/* Code the file's CFI does not cover may be ReadyToRun code of an
	 * assembly a single-file app's executable stores. */
	if (!code->cfi && resolver->managed &&
	    managed_images_unwind_at(resolver->managed, mapping->path, file_offset, &code->unwind))
		code->kind = CODE_PRECOMPILED;
}

void resolver_code_at(struct resolver *resolver, pid_t pid, uint64_t address, struct code_at *code)
{
	struct process *process = find_process(resolver, pid);

	if (resolver->code_cache &&
	    code_cache_find(resolver->code_cache, process->code_generation, address, code))
		return;
	find_code(resolver, process, address, code);
	/* Only mapped files' answers hold until the mappings change. */
	if (resolver->code_cache && code->kind != CODE_UNMAPPED && code->kind != CODE_GENERATED)
		code_cache_keep(resolver->code_cache, process->code_generation, address, code);
}
