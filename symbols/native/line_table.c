#include "line_table.h"

bool line_table_find(struct dwarf_units *units, uint64_t address, struct source_line *line)
{
	Dwarf_Die unit;
	Dwarf_Line *row;
	const char *file;
	int number;

	if (!dwarf_units_find(units, address, &unit) || !(row = dwarf_getsrc_die(&unit, address)) ||
	    dwarf_lineno(row, &number) != 0 || number <= 0 ||
	    !(file = dwarf_linesrc(row, NULL, NULL)))
		return false;
	*line = (struct source_line){.file = dwarf_units_source_path(units, &unit, file),
				     .number = (uint32_t)number};
	return true;
}
