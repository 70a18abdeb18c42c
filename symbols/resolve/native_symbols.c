#include "native_symbols.h"

#include "call_frame_info.h"
#include "debug_file_search.h"
#include "dwarf_units.h"
#include "elf_file.h"
#include "inline_frames.h"
#include "kernel_symbols_copy.h"
#include "line_table.h"
#include "mapped_file.h"
#include "symbol_server.h"
#include "symbol_table.h"
#include "symbols_log.h"
#include "target_file.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MODULE_BUCKETS = 256 };

/* One mapped ELF file, loaded on its first lookup. A module that could not be
 * read stays in the cache with no symbols, so it is tried once. */
struct module {
	char *path;
	struct file_identity identity;
	struct module *next_in_bucket;
	struct load_segment *segments;
	size_t segment_count;
	struct symbol_table *symbols; /* NULL: nothing names this module */
	/* The file holding the module's DWARF, kept open from the symbols'
	 * load on. A lookup that first hits the module reads its line table:
	 * only modules whose code was sampled have it read, not those only
	 * unwound through. */
	struct elf_file *dwarf_file;
	bool dwarf_read; /* its line table, and its units when inlined frames are asked for */
	struct line_table *lines;  /* NULL: none, or not read yet */
	struct dwarf_units *dwarf; /* libdw's units: for inlined frames, and the compilation
				      folder of a line table that does not name it */
	bool units_opened;
	struct inline_frames *inlines; /* NULL: no DWARF, or not asked for */
	struct call_frame_info *cfi;   /* loaded on the first leaf unwound here */
	bool cfi_loaded;
	struct build_id build_id; /* the binary's; size 0: none, or not loaded yet */
	enum mangling mangling;	  /* of its symbols' names */
	pid_t mapped_by;	  /* the mapped_file's: a live process mapping it */
	unsigned last_round;	  /* of native_symbols_forget_unused, when last asked about */
};

struct native_symbols {
	bool inline_frames;
	pid_t live_pid;
	FILE *log;
	char **symbol_dirs; /* the config's, then PROFCPU_SYMBOL_PATH's */
	struct debug_search search;
	struct module *buckets[MODULE_BUCKETS];
	struct module *last_hit;
	char *kernel_symbols_copy; /* its path in the config's capture folder */
	bool write_kernel_symbols_copy;
	bool kernel_copy_finished; /* a replay ended it: the next one starts anew */
	struct kernel_symbols *kernel;
	bool kernel_loaded;
	unsigned round; /* native_symbols_forget_unused's calls */
};

static bool append_dir(char ***dirs, size_t *count, const char *dir, size_t length)
{
	char **grown = realloc(*dirs, (*count + 2) * sizeof(*grown));

	if (!grown)
		return false;
	*dirs = grown;
	if (length && !(grown[*count] = strndup(dir, length)))
		return false;
	*count += length != 0;
	grown[*count] = NULL;
	return true;
}

static bool collect_symbol_dirs(struct native_symbols *symbols,
				const struct native_symbols_config *config)
{
	const char *environment = getenv("PROFCPU_SYMBOL_PATH");
	size_t count = 0;

	if (!append_dir(&symbols->symbol_dirs, &count, "", 0))
		return false;
	for (size_t i = 0; config->symbol_dirs && config->symbol_dirs[i]; i++)
		if (!append_dir(&symbols->symbol_dirs, &count, config->symbol_dirs[i],
				strlen(config->symbol_dirs[i])))
			return false;
	for (const char *cursor = environment; cursor && *cursor;) {
		size_t length = strcspn(cursor, ":");

		if (!append_dir(&symbols->symbol_dirs, &count, cursor, length))
			return false;
		cursor += length + (cursor[length] == ':');
	}
	return true;
}

bool native_symbols_downloads(const struct native_symbols_config *config)
{
	const char *debuginfod_urls = getenv("DEBUGINFOD_URLS");

	return !config->offline && (config->symbol_server || (debuginfod_urls && *debuginfod_urls));
}

struct native_symbols *native_symbols_new(const struct native_symbols_config *config)
{
	struct native_symbols *symbols = calloc(1, sizeof(*symbols));

	if (!symbols)
		return NULL;
	symbols->inline_frames = config->inline_frames;
	symbols->live_pid = config->live_pid;
	symbols->log = config->log;
	symbols->write_kernel_symbols_copy = config->write_kernel_symbols_copy;
	if (config->capture_dir && asprintf(&symbols->kernel_symbols_copy, "%s/%s",
					    config->capture_dir, KERNEL_SYMBOLS_COPY) < 0)
		symbols->kernel_symbols_copy = NULL;
	if (!collect_symbol_dirs(symbols, config) ||
	    (config->capture_dir && !symbols->kernel_symbols_copy)) {
		native_symbols_free(symbols);
		return NULL;
	}
	symbols->search = (struct debug_search){
	    .target_root_fd = config->target_root_fd,
	    .symbol_dirs = (const char *const *)symbols->symbol_dirs,
	    .log = config->log,
	};
	if (native_symbols_downloads(config))
		symbols->search.server =
		    symbol_server_new(config->symbol_server, getenv("DEBUGINFOD_URLS"),
				      config->cache_dir, config->log);
	return symbols;
}

static void module_free(struct module *module)
{
	free(module->path);
	free(module->segments);
	symbol_table_free(module->symbols);
	line_table_free(module->lines);
	inline_frames_free(module->inlines);
	dwarf_units_free(module->dwarf);
	elf_file_close(module->dwarf_file);
	call_frame_info_free(module->cfi);
	free(module);
}

void native_symbols_free(struct native_symbols *symbols)
{
	if (!symbols)
		return;
	for (size_t i = 0; i < MODULE_BUCKETS; i++) {
		struct module *module = symbols->buckets[i], *next;

		for (; module; module = next) {
			next = module->next_in_bucket;
			module_free(module);
		}
	}
	for (size_t i = 0; symbols->symbol_dirs && symbols->symbol_dirs[i]; i++)
		free(symbols->symbol_dirs[i]);
	free(symbols->symbol_dirs);
	symbol_server_free(symbols->search.server);
	kernel_symbols_free(symbols->kernel);
	free(symbols->kernel_symbols_copy);
	free(symbols);
}

static size_t bucket_of(const char *path)
{
	uint32_t hash = 2166136261u; /* FNV-1a */

	for (; *path; path++)
		hash = (hash ^ (uint8_t)*path) * 16777619u;
	return hash % MODULE_BUCKETS;
}

/* A library of the distribution (libc, libssl, ...), whose debug files come
 * from its debug packages, not from Microsoft's symbol server. */
static bool is_distribution_library(const char *path)
{
	static const char *const folders[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};

	if (strstr(path, "dotnet")) /* a .NET runtime installed under /usr/lib */
		return false;
	for (size_t i = 0; i < sizeof(folders) / sizeof(*folders); i++)
		if (!strncmp(path, folders[i], strlen(folders[i])))
			return true;
	return false;
}

static void say_no_debug_information(const struct native_symbols *symbols, const char *path,
				     const struct elf_file *binary)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char hex[BUILD_ID_HEX_MAX], wanted[DEBUGLINK_NAME_MAX + 8];

	build_id_to_hex(&binary->build_id, hex);
	if (binary->debuglink.name[0])
		snprintf(wanted, sizeof(wanted), "%s", binary->debuglink.name);
	else
		snprintf(wanted, sizeof(wanted), "%s.debug", base);
	if (is_distribution_library(path))
		symbols_log(
		    symbols->log,
		    "%s (build-id %s) has no debug information: %s was not found, so only "
		    "exported functions are named (.dynsym); install the distribution's "
		    "debug package (Debian: %s, or its -dbgsym package from the "
		    "debian-debug archive), or set DEBUGINFOD_URLS=https://debuginfod.debian.net",
		    path, binary->build_id.size ? hex : "none", wanted,
		    !strncmp(base, "libc.so", 7) || !strncmp(base, "libm.so", 7) ||
			    !strncmp(base, "ld-linux", 8)
			? "apt-get install libc6-dbg"
			: "apt-get install <package>-dbgsym");
	else
		symbols_log(
		    symbols->log,
		    "%s (build-id %s) has no debug information: %s was not found, so only "
		    "exported functions are named (.dynsym); get it with `dotnet-symbol "
		    "--symbols -o DIR %s` and pass --symbols DIR, or pass --symbol-server URL",
		    path, binary->build_id.size ? hex : "none", wanted, path);
}

/* Reads symbols from `source`, the binary or its debug file, then keeps
 * `source` open for its DWARF when it has a line table. Returns whether any
 * function was named. */
static bool take_symbols(struct module *module, struct elf_file *source)
{
	struct symbol_table *table = symbol_table_new();

	if (table && elf_file_read_symbols(source, table) > 0) {
		symbol_table_set_mangling(table, module->mangling);
		symbol_table_finish(table);
		module->symbols = table;
	} else {
		symbol_table_free(table);
	}
	if (elf_file_has_line_table(source))
		module->dwarf_file = source;
	else
		elf_file_close(source);
	return module->symbols != NULL;
}

/* The file the process mapped: at its path inside the target's root when
 * the file there is that one, else through the live target's map_files
 * (a deleted or replaced library, a path that means another file here).
 * -1 when neither holds it. */
static int open_mapped_file(struct native_symbols *symbols, struct module *module)
{
	int fd = target_file_open(symbols->search.target_root_fd, module->path, 0);

	if (fd >= 0 && file_identity_matches(fd, &module->identity))
		return fd;
	if (fd >= 0)
		close(fd);
	pid_t live = symbols->live_pid > 0 ? symbols->live_pid : module->mapped_by;

	if (live > 0 && (fd = map_files_open(live, &module->identity)) >= 0)
		return fd;
	return -1;
}

static void load_module(struct native_symbols *symbols, struct module *module)
{
	int fd = open_mapped_file(symbols, module);
	struct elf_file *binary = elf_file_open(fd), *debug_file;
	char where[PATH_MAX + 32];

	if (fd < 0) {
		symbols_log(symbols->log,
			    "%s: the file the process mapped (inode %llu) is neither at that path "
			    "nor, the process being gone, in /proc/<pid>/map_files; its frames "
			    "stay unnamed",
			    module->path, (unsigned long long)module->identity.inode);
		return;
	}
	if (!binary) {
		symbols_log(symbols->log, "%s: not a readable ELF file; its frames stay unnamed",
			    module->path);
		return;
	}
	module->build_id = binary->build_id;
	/* A .NET app compiled ahead of time: its methods' symbols are named
	 * by the NativeAOT compiler (native_aot_name.h). */
	if (elf_file_exports(binary, "DotNetRuntimeDebugHeader"))
		module->mangling = MANGLING_NATIVE_AOT;
	if (binary->segment_count &&
	    (module->segments = malloc(binary->segment_count * sizeof(*module->segments)))) {
		memcpy(module->segments, binary->segments,
		       binary->segment_count * sizeof(*module->segments));
		module->segment_count = binary->segment_count;
	}
	if (elf_file_has_symtab(binary)) {
		take_symbols(module, binary);
		return;
	}
	debug_file = debug_file_find(&symbols->search, module->path, binary, where, sizeof(where));
	if (debug_file) {
		symbols_log(symbols->log, "%s: symbols from %s", module->path, where);
		elf_file_close(binary);
		take_symbols(module, debug_file);
		return;
	}
	say_no_debug_information(symbols, module->path, binary);
	take_symbols(module, binary);
}

static bool is_module_of(const struct module *module, const struct mapped_file *file)
{
	return module->identity.inode == file->identity.inode &&
	       module->identity.major == file->identity.major &&
	       module->identity.minor == file->identity.minor &&
	       strcmp(module->path, file->path) == 0;
}

static struct module *find_module(struct native_symbols *symbols, const struct mapped_file *file)
{
	size_t bucket = bucket_of(file->path);
	struct module *module;

	if (symbols->last_hit && is_module_of(symbols->last_hit, file)) {
		symbols->last_hit->last_round = symbols->round;
		return symbols->last_hit;
	}
	for (module = symbols->buckets[bucket]; module; module = module->next_in_bucket)
		if (is_module_of(module, file)) {
			module->last_round = symbols->round;
			return symbols->last_hit = module;
		}
	module = calloc(1, sizeof(*module));
	if (!module || !(module->path = strdup(file->path))) {
		free(module);
		return NULL;
	}
	module->identity = file->identity;
	module->mapped_by = file->mapped_by;
	module->last_round = symbols->round;
	load_module(symbols, module);
	module->next_in_bucket = symbols->buckets[bucket];
	symbols->buckets[bucket] = module;
	return symbols->last_hit = module;
}

/* libdw's units of the module's DWARF, opened on their first use. */
static struct dwarf_units *units_of(struct module *module)
{
	if (!module->units_opened && module->dwarf_file)
		module->dwarf = dwarf_units_open(module->dwarf_file);
	module->units_opened = true;
	return module->dwarf;
}

/* The module's DWARF, read on the first lookup that hits it. */
static void load_dwarf(struct native_symbols *symbols, struct module *module)
{
	module->dwarf_read = true;
	if (symbols->inline_frames && units_of(module))
		module->inlines = inline_frames_new(module->dwarf, module->mangling);
	module->lines = line_table_open(module->dwarf_file);
	if (!module->lines && !module->dwarf) {
		elf_file_close(module->dwarf_file);
		module->dwarf_file = NULL;
	}
}

/* The line of `address`, its file joined to its unit's compilation folder
 * when the line table does not name that folder (DWARF 4 and older). */
static struct source_line line_of(struct module *module, uint64_t address)
{
	struct source_line line = {0};
	struct dwarf_units *units;
	bool relative_to_unit;
	Dwarf_Die unit;

	if (!module->lines || !line_table_find(module->lines, address, &line, &relative_to_unit) ||
	    !relative_to_unit)
		return line;
	if ((units = units_of(module)) && dwarf_units_find(units, address, &unit))
		line.file = dwarf_units_source_path(units, &unit, line.file);
	return line;
}

void native_symbols_forget_unused(struct native_symbols *symbols, unsigned rounds)
{
	if (!symbols)
		return;
	symbols->last_hit = NULL;
	for (size_t i = 0; i < MODULE_BUCKETS; i++) {
		struct module **link = &symbols->buckets[i];

		while (*link) {
			struct module *module = *link;

			if (symbols->round - module->last_round >= rounds) {
				*link = module->next_in_bucket;
				module_free(module);
			} else {
				link = &module->next_in_bucket;
			}
		}
	}
	symbols->round++;
}

size_t native_symbols_lookup(struct native_symbols *symbols, const struct mapped_file *file,
			     uint64_t file_offset, struct native_frame *frames, size_t max_frames)
{
	struct module *module = find_module(symbols, file);
	uint64_t address, offset;
	const char *name;
	struct source_line line;
	size_t count = 0;

	if (max_frames == 0 || !module ||
	    !load_segments_find_address(module->segments, module->segment_count, file_offset,
					&address))
		return 0;
	if (module->dwarf_file && !module->dwarf_read)
		load_dwarf(symbols, module);
	line = line_of(module, address);
	if (module->inlines)
		count = inline_frames_find(module->inlines, address, frames, max_frames - 1, &line);
	if (!module->symbols || !symbol_table_find(module->symbols, address, &name, &offset))
		return count; /* inlined frames alone still say where the time went */
	frames[count++] = (struct native_frame){.function = name, .offset = offset, .line = line};
	return count;
}

/* The binary's .eh_frame, else the .debug_frame of the binary or of its
 * debug file. */
static void load_call_frame_info(struct native_symbols *symbols, struct module *module)
{
	int fd = open_mapped_file(symbols, module);
	struct elf_file *binary = elf_file_open(fd), *debug_file;
	char where[PATH_MAX + 32];

	module->cfi_loaded = true;
	if (!binary || (module->cfi = call_frame_info_open(binary)))
		return;
	debug_file = debug_file_find(&symbols->search, module->path, binary, where, sizeof(where));
	elf_file_close(binary);
	if (debug_file && !(module->cfi = call_frame_info_open(debug_file)))
		elf_file_close(debug_file);
	if (!module->cfi)
		symbols_log(symbols->log,
			    "%s: no call frame information; stacks through its functions that "
			    "keep no frame pointer stop there",
			    module->path);
}

struct call_frame_info *native_symbols_call_frame_info(struct native_symbols *symbols,
						       const struct mapped_file *file,
						       uint64_t file_offset, uint64_t *file_address)
{
	struct module *module = find_module(symbols, file);

	if (!module || !load_segments_find_address(module->segments, module->segment_count,
						   file_offset, file_address))
		return NULL;
	if (!module->cfi_loaded)
		load_call_frame_info(symbols, module);
	return module->cfi;
}

bool native_symbols_lookup_kernel(struct native_symbols *symbols, uint64_t address,
				  struct native_frame *frame)
{
	const char *name;
	uint64_t offset;

	if (!symbols->kernel_loaded) {
		symbols->kernel_loaded = true;
		symbols->kernel = kernel_symbols_for_capture(
		    symbols->kernel_symbols_copy, symbols->write_kernel_symbols_copy, symbols->log);
	} else if (symbols->kernel_copy_finished && symbols->kernel) {
		symbols->kernel_copy_finished = false;
		kernel_symbols_start_copy(symbols->kernel, symbols->kernel_symbols_copy,
					  symbols->log);
	}
	if (!symbols->kernel || !kernel_symbols_find(symbols->kernel, address, &name, &offset))
		return false;
	*frame = (struct native_frame){.function = name, .offset = offset};
	return true;
}

void native_symbols_finish_kernel_copy(struct native_symbols *symbols)
{
	if (!symbols->write_kernel_symbols_copy || !symbols->kernel)
		return;
	kernel_symbols_finish_copy(symbols->kernel, symbols->kernel_symbols_copy, symbols->log);
	symbols->kernel_copy_finished = true;
}

bool native_symbols_build_id(struct native_symbols *symbols, const struct mapped_file *file,
			     char hex[BUILD_ID_HEX_MAX])
{
	struct module *module = find_module(symbols, file);

	if (!module || !module->build_id.size)
		return false;
	build_id_to_hex(&module->build_id, hex);
	return true;
}
