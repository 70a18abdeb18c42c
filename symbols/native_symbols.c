#include "native_symbols.h"

#include "elf_file.h"
#include "kernel_symbols.h"
#include "symbol_table.h"
#include "target_root.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { MODULE_BUCKETS = 256 };

/* One mapped ELF file, loaded on its first lookup. A module that could not be
 * read stays in the cache with no symbols, so it is tried once. */
struct module {
	char *path;
	struct module *next_in_bucket;
	struct load_segment *segments;
	size_t segment_count;
	struct symbol_table *symbols; /* NULL: nothing names this module */
};

struct native_symbols {
	struct native_symbols_config config;
	struct module *buckets[MODULE_BUCKETS];
	struct module *last_hit;
	struct symbol_table *kernel;
	bool kernel_loaded;
};

static void say(const struct native_symbols *symbols, const char *format, ...)
{
	va_list arguments;

	if (!symbols->config.log)
		return;
	fputs("profcpu: symbols: ", symbols->config.log);
	va_start(arguments, format);
	vfprintf(symbols->config.log, format, arguments);
	va_end(arguments);
	fputc('\n', symbols->config.log);
}

struct native_symbols *native_symbols_new(const struct native_symbols_config *config)
{
	struct native_symbols *symbols = calloc(1, sizeof(*symbols));

	if (!symbols)
		return NULL;
	symbols->config = *config;
	return symbols;
}

static void module_free(struct module *module)
{
	free(module->path);
	free(module->segments);
	symbol_table_free(module->symbols);
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
	symbol_table_free(symbols->kernel);
	free(symbols);
}

static size_t bucket_of(const char *path)
{
	uint32_t hash = 2166136261u; /* FNV-1a */

	for (; *path; path++)
		hash = (hash ^ (uint8_t)*path) * 16777619u;
	return hash % MODULE_BUCKETS;
}

static void load_module(struct native_symbols *symbols, struct module *module)
{
	int fd = target_root_openat(symbols->config.target_root_fd, module->path,
				    O_RDONLY | O_NONBLOCK | O_NOCTTY);
	struct elf_file *binary = elf_file_open(fd);
	struct symbol_table *table;

	if (!binary) {
		say(symbols, "%s: not a readable ELF file; its frames stay unnamed", module->path);
		return;
	}
	module->segments = malloc(binary->segment_count * sizeof(*module->segments) + 1);
	if (module->segments) {
		memcpy(module->segments, binary->segments,
		       binary->segment_count * sizeof(*module->segments));
		module->segment_count = binary->segment_count;
	}
	table = symbol_table_new();
	if (table && elf_file_read_symbols(binary, table) > 0) {
		symbol_table_finish(table);
		module->symbols = table;
	} else {
		symbol_table_free(table);
	}
	elf_file_close(binary);
}

static struct module *find_module(struct native_symbols *symbols, const char *path)
{
	size_t bucket = bucket_of(path);
	struct module *module;

	if (symbols->last_hit && strcmp(symbols->last_hit->path, path) == 0)
		return symbols->last_hit;
	for (module = symbols->buckets[bucket]; module; module = module->next_in_bucket)
		if (strcmp(module->path, path) == 0)
			return symbols->last_hit = module;
	module = calloc(1, sizeof(*module));
	if (!module || !(module->path = strdup(path))) {
		free(module);
		return NULL;
	}
	load_module(symbols, module);
	module->next_in_bucket = symbols->buckets[bucket];
	symbols->buckets[bucket] = module;
	return symbols->last_hit = module;
}

size_t native_symbols_lookup(struct native_symbols *symbols, const char *path, uint64_t file_offset,
			     struct native_frame *frames, size_t max_frames)
{
	struct module *module = find_module(symbols, path);
	uint64_t address;
	const char *name;
	uint64_t offset;

	if (max_frames == 0 || !module || !module->symbols ||
	    !load_segments_find_address(module->segments, module->segment_count, file_offset,
					&address) ||
	    !symbol_table_find(module->symbols, address, &name, &offset))
		return 0;
	frames[0] = (struct native_frame){.function = name, .offset = offset, .inlined = false};
	return 1;
}

bool native_symbols_lookup_kernel(struct native_symbols *symbols, uint64_t address,
				  struct native_frame *frame)
{
	const char *name;
	uint64_t offset;

	if (!symbols->kernel_loaded) {
		FILE *kallsyms = fopen("/proc/kallsyms", "re");

		symbols->kernel_loaded = true;
		if (kallsyms) {
			symbols->kernel = kernel_symbols_read(kallsyms);
			fclose(kallsyms);
		}
		if (!symbols->kernel)
			say(symbols, "/proc/kallsyms shows no addresses: kernel frames stay "
				     "unnamed (run as root, or set kernel.kptr_restrict=0)");
	}
	if (!symbols->kernel || !symbol_table_find(symbols->kernel, address, &name, &offset))
		return false;
	*frame = (struct native_frame){.function = name, .offset = offset, .inlined = false};
	return true;
}
