#include "dwarf_units.h"
#include "debug_sections.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>

/* Address ranges of the compilation units, sorted: the index .debug_aranges
 * would be, built from the units themselves since many compilers (clang,
 * which builds libcoreclr) no longer emit .debug_aranges. */
struct unit_range {
	uint64_t low, high;
	Dwarf_Off offset;
};

/* A relative source file name and its absolute path. */
struct joined_path {
	const char *file; /* libdw's or the line table's, identified by its address */
	char *path;
};

struct dwarf_units {
	struct debug_sections *sections; /* inflated before libdw opened them */
	Dwarf *dwarf;
	struct unit_range *ranges;
	size_t range_count;
	bool indexed;
	struct joined_path *joined; /* open addressing by file address */
	size_t joined_count, joined_size;
};

struct dwarf_units *dwarf_units_open(struct elf_file *file)
{
	struct dwarf_units *units = calloc(1, sizeof(*units));

	if (units)
		units->sections = debug_sections_prepare(file->elf);
	if (!units || !(units->dwarf = dwarf_begin_elf(file->elf, DWARF_C_READ, NULL))) {
		if (units)
			debug_sections_free(units->sections);
		free(units);
		return NULL;
	}
	return units;
}

void dwarf_units_free(struct dwarf_units *units)
{
	if (!units)
		return;
	for (size_t i = 0; i < units->joined_size; i++)
		free(units->joined[i].path);
	free(units->joined);
	free(units->ranges);
	dwarf_end(units->dwarf);
	debug_sections_free(units->sections);
	free(units);
}

static int compare_ranges(const void *a, const void *b)
{
	const struct unit_range *x = a, *y = b;

	return (x->low > y->low) - (x->low < y->low);
}

static void add_unit_ranges(struct dwarf_units *units, Dwarf_Die *unit, size_t *capacity)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t offset = 0;

	while ((offset = dwarf_ranges(unit, offset, &base, &low, &high)) > 0) {
		if (units->range_count == *capacity) {
			size_t grown_capacity = *capacity ? *capacity * 2 : 256;
			struct unit_range *grown =
			    realloc(units->ranges, grown_capacity * sizeof(*grown));

			if (!grown)
				return;
			units->ranges = grown;
			*capacity = grown_capacity;
		}
		units->ranges[units->range_count++] =
		    (struct unit_range){.low = low, .high = high, .offset = dwarf_dieoffset(unit)};
	}
}

static void index_units(struct dwarf_units *units)
{
	Dwarf_Off offset = 0, next;
	size_t header_size, capacity = 0;

	units->indexed = true;
	while (dwarf_nextcu(units->dwarf, offset, &next, &header_size, NULL, NULL, NULL) == 0) {
		Dwarf_Die unit;

		if (dwarf_offdie(units->dwarf, offset + header_size, &unit))
			add_unit_ranges(units, &unit, &capacity);
		offset = next;
	}
	if (units->range_count > 1)
		qsort(units->ranges, units->range_count, sizeof(*units->ranges), compare_ranges);
}

/* Ranges of different units do not overlap in a linked file, so the last
 * range starting at or before `address` is the only candidate. */
bool dwarf_units_find(struct dwarf_units *units, uint64_t address, Dwarf_Die *unit)
{
	size_t low = 0, high;

	if (!units->indexed)
		index_units(units);
	high = units->range_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (units->ranges[middle].low <= address)
			low = middle + 1;
		else
			high = middle;
	}
	return low > 0 && address < units->ranges[low - 1].high &&
	       dwarf_offdie(units->dwarf, units->ranges[low - 1].offset, unit);
}

static size_t slot_of(const struct dwarf_units *units, const char *file)
{
	size_t slot = ((uintptr_t)file >> 3) * 11400714819323198485ull & (units->joined_size - 1);

	while (units->joined[slot].file && units->joined[slot].file != file)
		slot = (slot + 1) & (units->joined_size - 1);
	return slot;
}

static bool grow_joined(struct dwarf_units *units)
{
	struct dwarf_units grown = {.joined_size =
					units->joined_size ? units->joined_size * 2 : 64};

	if (!(grown.joined = calloc(grown.joined_size, sizeof(*grown.joined))))
		return false;
	for (size_t i = 0; i < units->joined_size; i++)
		if (units->joined[i].file)
			grown.joined[slot_of(&grown, units->joined[i].file)] = units->joined[i];
	free(units->joined);
	units->joined = grown.joined;
	units->joined_size = grown.joined_size;
	return true;
}

const char *dwarf_units_source_path(struct dwarf_units *units, Dwarf_Die *unit, const char *file)
{
	Dwarf_Attribute attribute;
	const char *folder;
	size_t slot;

	if (file[0] == '/')
		return file;
	if ((units->joined_count + 1) * 2 > units->joined_size && !grow_joined(units))
		return file;
	slot = slot_of(units, file);
	if (units->joined[slot].file)
		return units->joined[slot].path;
	if (!dwarf_attr(unit, DW_AT_comp_dir, &attribute) ||
	    !(folder = dwarf_formstring(&attribute)) || folder[0] != '/')
		return file;
	units->joined[slot].file = file;
	if (asprintf(&units->joined[slot].path, "%s/%s", folder, file) < 0) {
		units->joined[slot] = (struct joined_path){0};
		return file;
	}
	units->joined_count++;
	return units->joined[slot].path;
}
