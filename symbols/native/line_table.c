#include "line_table.h"

#include "debug_sections.h"
#include "line_programs.h"

#include <stdlib.h>

struct line_table {
	struct line_programs *programs;
	void *inflated[3]; /* the sections' bytes, when they were compressed */
};

struct line_table *line_table_open(struct elf_file *file)
{
	struct line_table *table = calloc(1, sizeof(*table));
	struct line_sections sections;

	/* DWARF is in the file's byte order: big-endian machines are not read. */
	if (!table || elf_getident(file->elf, NULL)[EI_DATA] != ELFDATA2LSB) {
		free(table);
		return NULL;
	}
	sections.line =
	    debug_section_read(file->elf, ".debug_line", &sections.line_size, &table->inflated[0]);
	sections.line_str = debug_section_read(file->elf, ".debug_line_str",
					       &sections.line_str_size, &table->inflated[1]);
	sections.str =
	    debug_section_read(file->elf, ".debug_str", &sections.str_size, &table->inflated[2]);
	if (!(table->programs = line_programs_index(&sections))) {
		line_table_free(table);
		return NULL;
	}
	return table;
}

void line_table_free(struct line_table *table)
{
	if (!table)
		return;
	line_programs_free(table->programs);
	for (size_t i = 0; i < sizeof(table->inflated) / sizeof(*table->inflated); i++)
		free(table->inflated[i]);
	free(table);
}

bool line_table_find(struct line_table *table, uint64_t address, struct source_line *line,
		     bool *relative_to_unit)
{
	return line_programs_find(table->programs, address, line, relative_to_unit);
}
