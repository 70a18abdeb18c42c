#include "kernel_symbols.h"

#include <inttypes.h>
#include <string.h>

struct symbol_table *kernel_symbols_read(FILE *kallsyms)
{
	struct symbol_table *table = symbol_table_new();
	char line[512], type, name[256];
	uint64_t address;
	bool any_address = false;

	if (!table)
		return NULL;
	while (fgets(line, sizeof(line), kallsyms)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &address, &type, name) != 3)
			continue;
		if (!strchr("tTwW", type))
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
