#include "kernel_symbols.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One line, "ADDRESS TYPE NAME[\t[module]]". Parsed by hand: the kernel
 * lists over 100,000 symbols and sscanf() took most of the load time. */
static bool parse_line(char *line, uint64_t *address, char *type, const char **name)
{
	char *end;

	*address = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || end[1] == '\0' || end[2] != ' ')
		return false;
	*type = end[1];
	*name = end + 3;
	end[3 + strcspn(end + 3, " \t\n")] = '\0';
	return **name != '\0';
}

struct symbol_table *kernel_symbols_read(FILE *kallsyms)
{
	struct symbol_table *table = symbol_table_new();
	char line[512], type;
	const char *name;
	uint64_t address;
	bool any_address = false;

	if (!table)
		return NULL;
	while (fgets(line, sizeof(line), kallsyms)) {
		if (!parse_line(line, &address, &type, &name) || !strchr("tTwW", type))
			continue;
		any_address |= address != 0;
		if (!symbol_table_add(table, name, address, 0, SYMBOL_RANK_GLOBAL))
			break;
	}
	if (!any_address) {
		symbol_table_free(table);
		return NULL;
	}
	symbol_table_finish(table);
	return table;
}
