/* A boot's copy of the core kernel's symbols (kernel_symbols_table.h) on
 * any bytes, as a damaged or planted ~/.cache/profcpu/kallsyms-core would
 * give them: a table is refused, or every name it gives lies within it and
 * belongs to the entry at or below the address asked for. */
#include "fuzz_input.h"
#include "kernel_symbols_table.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { LOOKUPS = 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[32];
	int fd = fuzz_input_file(data, size, path);
	struct kernel_symbols_table *table = kernel_symbols_table_map(fd, 0);

	close(fd);
	if (!table)
		return 0;
	for (size_t i = 0; i < LOOKUPS; i++) {
		uint64_t address = 0;
		size_t position;
		struct kernel_symbol_entry entry;

		if (size >= 8)
			memcpy(&address, data + (i * 8) % (size - 7), sizeof(address));
		if (!kernel_symbols_table_find(table, address, &position))
			continue;
		entry = kernel_symbols_table_entry(table, position);
		if (position >= kernel_symbols_table_count(table) || entry.address > address ||
		    strlen(entry.name) >= size)
			abort();
	}
	kernel_symbols_table_free(table);
	return 0;
}
