#include "inline_frames.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

struct inline_frames {
	struct dwarf_units *units;
	enum mangling mangling;
	char **names; /* demangled names handed out, freed with the module */
	size_t name_count;
};

struct inline_frames *inline_frames_new(struct dwarf_units *units, enum mangling mangling)
{
	struct inline_frames *inlines = calloc(1, sizeof(*inlines));

	if (inlines) {
		inlines->units = units;
		inlines->mangling = mangling;
	}
	return inlines;
}

void inline_frames_free(struct inline_frames *inlines)
{
	if (!inlines)
		return;
	for (size_t i = 0; i < inlines->name_count; i++)
		free(inlines->names[i]);
	free(inlines->names);
	free(inlines);
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
	if (!name || !(demangled = demangle(name, inlines->mangling)))
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

/* Where the inlined call `scope` was made, in the code holding it. */
static struct source_line call_site(struct dwarf_units *units, Dwarf_Die *unit, Dwarf_Die *scope)
{
	Dwarf_Attribute attribute;
	Dwarf_Files *files;
	Dwarf_Word file_index, number;
	size_t file_count;
	const char *file;

	if (!dwarf_attr(scope, DW_AT_call_file, &attribute) ||
	    dwarf_formudata(&attribute, &file_index) != 0 ||
	    !dwarf_attr(scope, DW_AT_call_line, &attribute) ||
	    dwarf_formudata(&attribute, &number) != 0 || number == 0 || number > UINT32_MAX ||
	    dwarf_getsrcfiles(unit, &files, &file_count) != 0 || file_index >= file_count ||
	    !(file = dwarf_filesrc(files, file_index, NULL, NULL)))
		return (struct source_line){0};
	return (struct source_line){.file = dwarf_units_source_path(units, unit, file),
				    .number = (uint32_t)number};
}

size_t inline_frames_find(struct inline_frames *inlines, uint64_t address,
			  struct native_frame *frames, size_t max, struct source_line *line)
{
	Dwarf_Die unit, *scopes = NULL;
	int scope_count;
	size_t count = 0;

	if (!dwarf_units_find(inlines->units, address, &unit))
		return 0;
	scope_count = dwarf_getscopes(&unit, address, &scopes);
	for (int i = 0; i < scope_count && count < max; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		frames[count++] = (struct native_frame){
		    .function = inlined_name(inlines, &scopes[i]),
		    .offset = offset_in_scope(&scopes[i], address),
		    .inlined = true,
		    .line = *line,
		};
		*line = call_site(inlines->units, &unit, &scopes[i]);
	}
	free(scopes);
	return count;
}
