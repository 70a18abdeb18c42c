#include "inline_frames.h"

#include "demangle.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* Address ranges of the compilation units, sorted: the index .debug_aranges
 * would be, built from the units themselves since many compilers (clang,
 * which builds libcoreclr) no longer emit .debug_aranges. */
struct unit_range {
	uint64_t low, high;
	Dwarf_Off offset;
};

struct inline_frames {
	struct elf_file *file;
	Dwarf *dwarf;
	struct unit_range *ranges;
	size_t range_count;
	bool indexed;
	char **names; /* demangled names handed out, freed with the module */
	size_t name_count;
};

struct inline_frames *inline_frames_open(struct elf_file *file)
{
	struct inline_frames *inlines = calloc(1, sizeof(*inlines));

	if (!inlines || !(inlines->dwarf = dwarf_begin_elf(file->elf, DWARF_C_READ, NULL))) {
		free(inlines);
		elf_file_close(file);
		return NULL;
	}
	inlines->file = file;
	return inlines;
}

void inline_frames_free(struct inline_frames *inlines)
{
	if (!inlines)
		return;
	for (size_t i = 0; i < inlines->name_count; i++)
		free(inlines->names[i]);
	free(inlines->names);
	free(inlines->ranges);
	dwarf_end(inlines->dwarf);
	elf_file_close(inlines->file);
	free(inlines);
}

static int compare_ranges(const void *a, const void *b)
{
	const struct unit_range *x = a, *y = b;

	return (x->low > y->low) - (x->low < y->low);
}

static void add_unit_ranges(struct inline_frames *inlines, Dwarf_Die *unit, size_t *capacity)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t offset = 0;

	while ((offset = dwarf_ranges(unit, offset, &base, &low, &high)) > 0) {
		if (inlines->range_count == *capacity) {
			size_t grown_capacity = *capacity ? *capacity * 2 : 256;
			struct unit_range *grown =
			    realloc(inlines->ranges, grown_capacity * sizeof(*grown));

			if (!grown)
				return;
			inlines->ranges = grown;
			*capacity = grown_capacity;
		}
		inlines->ranges[inlines->range_count++] =
		    (struct unit_range){.low = low, .high = high, .offset = dwarf_dieoffset(unit)};
	}
}

static void index_units(struct inline_frames *inlines)
{
	Dwarf_Off offset = 0, next;
	size_t header_size, capacity = 0;

	inlines->indexed = true;
	while (dwarf_nextcu(inlines->dwarf, offset, &next, &header_size, NULL, NULL, NULL) == 0) {
		Dwarf_Die unit;

		if (dwarf_offdie(inlines->dwarf, offset + header_size, &unit))
			add_unit_ranges(inlines, &unit, &capacity);
		offset = next;
	}
	if (inlines->range_count > 1)
		qsort(inlines->ranges, inlines->range_count, sizeof(*inlines->ranges),
		      compare_ranges);
}

/* The unit whose ranges hold `address`; ranges of different units do not
 * overlap in a linked file, so the last range starting at or before it is
 * the only candidate. */
static bool find_unit(struct inline_frames *inlines, uint64_t address, Dwarf_Die *unit)
{
	size_t low = 0, high;

	if (!inlines->indexed)
		index_units(inlines);
	high = inlines->range_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (inlines->ranges[middle].low <= address)
			low = middle + 1;
		else
			high = middle;
	}
	return low > 0 && address < inlines->ranges[low - 1].high &&
	       dwarf_offdie(inlines->dwarf, inlines->ranges[low - 1].offset, unit);
}

/* The linkage name (demangled) of an inlined function's abstract origin, or
 * its plain DW_AT_name. */
static const char *inlined_name(struct inline_frames *inlines, Dwarf_Die *scope)
{
	Dwarf_Attribute attribute;
	const char *name = NULL;
	char *demangled, **grown;

	if (dwarf_attr_integrate(scope, DW_AT_linkage_name, &attribute) ||
	    dwarf_attr_integrate(scope, DW_AT_MIPS_linkage_name, &attribute))
		name = dwarf_formstring(&attribute);
	if (!name && dwarf_attr_integrate(scope, DW_AT_name, &attribute))
		return dwarf_formstring(&attribute);
	if (!name || !(demangled = demangle(name)))
		return name;
	grown = realloc(inlines->names, (inlines->name_count + 1) * sizeof(*grown));
	if (!grown) {
		free(demangled);
		return name;
	}
	inlines->names = grown;
	inlines->names[inlines->name_count++] = demangled;
	return demangled;
}

static uint64_t offset_in_scope(Dwarf_Die *scope, uint64_t address)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t offset = 0;

	while ((offset = dwarf_ranges(scope, offset, &base, &low, &high)) > 0)
		if (address >= low && address < high)
			return address - low;
	return 0;
}

size_t inline_frames_find(struct inline_frames *inlines, uint64_t address,
			  struct native_frame *frames, size_t max)
{
	Dwarf_Die unit, *scopes = NULL;
	int scope_count;
	size_t count = 0;

	if (!find_unit(inlines, address, &unit))
		return 0;
	scope_count = dwarf_getscopes(&unit, address, &scopes);
	for (int i = 0; i < scope_count && count < max; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		frames[count++] = (struct native_frame){
		    .function = inlined_name(inlines, &scopes[i]),
		    .offset = offset_in_scope(&scopes[i], address),
		    .inlined = true,
		};
	}
	free(scopes);
	return count;
}
