#include "dwarf_units.h"

#include <stdlib.h>

/* Address ranges of the compilation units, sorted: the index .debug_aranges
 * would be, built from the units themselves since many compilers (clang,
 * which builds libcoreclr) no longer emit .debug_aranges. */
struct unit_range {
	uint64_t low, high;
	Dwarf_Off offset;
};

struct dwarf_units {
	struct elf_file *file;
	Dwarf *dwarf;
	struct unit_range *ranges;
	size_t range_count;
	bool indexed;
};

struct dwarf_units *dwarf_units_open(struct elf_file *file)
{
	struct dwarf_units *units = calloc(1, sizeof(*units));

	if (!units || !(units->dwarf = dwarf_begin_elf(file->elf, DWARF_C_READ, NULL))) {
		free(units);
		elf_file_close(file);
		return NULL;
	}
	units->file = file;
	return units;
}

void dwarf_units_free(struct dwarf_units *units)
{
	if (!units)
		return;
	free(units->ranges);
	dwarf_end(units->dwarf);
	elf_file_close(units->file);
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
