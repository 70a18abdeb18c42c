#include "managed_lines.h"
#include "assembly_pdb.h"
#include "buffer.h"
#include "symbols_log.h"

#include <stdlib.h>
#include <string.h>

/* Bounds on what a hostile trace can make this keep. */
#define MAX_CODE	1000000
#define MAX_MAP_ENTRIES (16u << 20)
#define MAX_ASSEMBLIES	4096

struct assembly {
	char *path;
	bool searched;		  /* its PDB was looked for */
	struct portable_pdb *pdb; /* NULL: none (said in the log) */
};

struct code {
	uint64_t start;
	uint32_t size;
	uint32_t method_token;
	uint32_t assembly; /* index in assemblies */
	size_t first_entry, entry_count;
	size_t order; /* when it was added: the later of two at one start wins */
};

struct managed_lines {
	struct code *code;
	size_t code_count, code_capacity;
	bool sorted;
	struct managed_line_map_entry *entries;
	size_t entry_count, entry_capacity;
	struct assembly *assemblies;
	size_t assembly_count, assembly_capacity;
	int root_fd;
	FILE *log;
};

struct managed_lines *managed_lines_new(void)
{
	struct managed_lines *lines = calloc(1, sizeof(*lines));

	if (lines)
		lines->root_fd = -1;
	return lines;
}

void managed_lines_free(struct managed_lines *lines)
{
	if (!lines)
		return;
	for (size_t i = 0; i < lines->assembly_count; i++) {
		free(lines->assemblies[i].path);
		portable_pdb_free(lines->assemblies[i].pdb);
	}
	free(lines->assemblies);
	free(lines->code);
	free(lines->entries);
	free(lines);
}

void managed_lines_read_files_in(struct managed_lines *lines, int root_fd, FILE *log)
{
	lines->root_fd = root_fd;
	lines->log = log;
}

size_t managed_lines_code_count(const struct managed_lines *lines)
{
	return lines->code_count;
}

/* The index of the assembly at `path`, added when new; -1 when the bound
 * or memory runs out. */
static long assembly_index(struct managed_lines *lines, const char *path)
{
	char *copy;

	for (size_t i = lines->assembly_count; i-- > 0;)
		if (!strcmp(lines->assemblies[i].path, path))
			return (long)i;
	if (lines->assembly_count == MAX_ASSEMBLIES ||
	    !buffer_reserve((void **)&lines->assemblies, &lines->assembly_capacity,
			    lines->assembly_count + 1, sizeof(*lines->assemblies)) ||
	    !(copy = strdup(path)))
		return -1;
	lines->assemblies[lines->assembly_count] = (struct assembly){.path = copy};
	return (long)lines->assembly_count++;
}

static int by_native_offset(const void *a, const void *b)
{
	const struct managed_line_map_entry *left = a, *right = b;

	return (left->native_offset > right->native_offset) -
	       (left->native_offset < right->native_offset);
}

bool managed_lines_add_code(struct managed_lines *lines, uint64_t start, uint32_t size,
			    const char *assembly_path, uint32_t method_token,
			    const struct managed_line_map_entry *map, size_t count)
{
	long assembly;

	if (size == 0 || count == 0 || start > UINT64_MAX - size || lines->code_count == MAX_CODE ||
	    count > MAX_MAP_ENTRIES - lines->entry_count ||
	    (assembly = assembly_index(lines, assembly_path)) < 0 ||
	    !buffer_reserve((void **)&lines->code, &lines->code_capacity, lines->code_count + 1,
			    sizeof(*lines->code)) ||
	    !buffer_reserve((void **)&lines->entries, &lines->entry_capacity,
			    lines->entry_count + count, sizeof(*lines->entries)))
		return false;
	memcpy(lines->entries + lines->entry_count, map, count * sizeof(*map));
	/* The JIT writes its map mostly in code order; lookups need it so. */
	qsort(lines->entries + lines->entry_count, count, sizeof(*map), by_native_offset);
	lines->code[lines->code_count] = (struct code){.start = start,
						       .size = size,
						       .method_token = method_token,
						       .assembly = (uint32_t)assembly,
						       .first_entry = lines->entry_count,
						       .entry_count = count,
						       .order = lines->code_count};
	lines->code_count++;
	lines->entry_count += count;
	lines->sorted = false;
	return true;
}

static int by_start_then_order(const void *a, const void *b)
{
	const struct code *left = a, *right = b;

	if (left->start != right->start)
		return (left->start > right->start) - (left->start < right->start);
	return (left->order > right->order) - (left->order < right->order);
}

/* The code holding `address`: of those starting at or before it, the one
 * starting last (the latest added among equals). */
static const struct code *find_code(struct managed_lines *lines, uint64_t address)
{
	size_t low = 0, high = lines->code_count;
	const struct code *found;

	/* No code yet: no array to sort (qsort() must not be given NULL). */
	if (!lines->sorted && lines->code_count) {
		qsort(lines->code, lines->code_count, sizeof(*lines->code), by_start_then_order);
		lines->sorted = true;
	}
	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (lines->code[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return NULL;
	found = &lines->code[low - 1];
	return address - found->start < found->size ? found : NULL;
}

/* The map entry of the code at `native_offset`: the last at or before it;
 * NULL when none is. */
static const struct managed_line_map_entry *
entry_at(const struct managed_lines *lines, const struct code *code, uint32_t native_offset)
{
	const struct managed_line_map_entry *map = lines->entries + code->first_entry;
	size_t low = 0, high = code->entry_count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (map[middle].native_offset <= native_offset)
			low = middle + 1;
		else
			high = middle;
	}
	return low ? &map[low - 1] : NULL;
}

static bool il_offset_at(const struct managed_lines *lines, const struct code *code,
			 uint32_t native_offset, uint32_t *il_offset)
{
	const struct managed_line_map_entry *entry = entry_at(lines, code, native_offset);

	return entry && managed_il_offset_of(entry, il_offset);
}

bool managed_il_offset_of(const struct managed_line_map_entry *entry, uint32_t *il_offset)
{
	*il_offset = entry->il_offset == MANAGED_IL_PROLOG ? 0 : entry->il_offset;
	return *il_offset != MANAGED_IL_EPILOG && *il_offset != MANAGED_IL_NO_MAPPING;
}

static struct portable_pdb *pdb_of(struct managed_lines *lines, struct assembly *assembly)
{
	char why[512];

	if (!assembly->searched) {
		assembly->searched = true;
		assembly->pdb = assembly_pdb_open(lines->root_fd, assembly->path, why, sizeof(why));
		if (!assembly->pdb)
			symbols_log(lines->log, "no source lines for the .NET code of %s: %s",
				    assembly->path, why);
	}
	return assembly->pdb;
}

bool managed_lines_has_pdb(struct managed_lines *lines, const char *assembly_path)
{
	long assembly = assembly_index(lines, assembly_path);

	return assembly >= 0 && pdb_of(lines, &lines->assemblies[assembly]);
}

bool managed_lines_lookup_il(struct managed_lines *lines, const char *assembly_path,
			     uint32_t method_token, uint32_t il_offset, struct source_line *line)
{
	long assembly = assembly_index(lines, assembly_path);
	struct portable_pdb *pdb;

	return assembly >= 0 && (pdb = pdb_of(lines, &lines->assemblies[assembly])) &&
	       portable_pdb_line(pdb, method_token, il_offset, line);
}

bool managed_lines_lookup_return(struct managed_lines *lines, uint64_t return_address,
				 struct source_line *line)
{
	const struct code *code = find_code(lines, return_address - 1);
	const struct managed_line_map_entry *call;
	struct portable_pdb *pdb;
	uint32_t il_offset;

	if (!code || return_address - code->start >= code->size)
		return false;
	call = entry_at(lines, code, (uint32_t)(return_address - 1 - code->start));
	return call && call->il_offset == MANAGED_IL_NO_MAPPING &&
	       il_offset_at(lines, code, (uint32_t)(return_address - code->start), &il_offset) &&
	       (pdb = pdb_of(lines, &lines->assemblies[code->assembly])) &&
	       portable_pdb_line(pdb, code->method_token, il_offset, line);
}

bool managed_lines_lookup(struct managed_lines *lines, uint64_t address, struct source_line *line)
{
	const struct code *code = find_code(lines, address);
	struct portable_pdb *pdb;
	uint32_t il_offset;

	return code && il_offset_at(lines, code, (uint32_t)(address - code->start), &il_offset) &&
	       (pdb = pdb_of(lines, &lines->assemblies[code->assembly])) &&
	       portable_pdb_line(pdb, code->method_token, il_offset, line);
}
