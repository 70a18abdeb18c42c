/* libFuzzer entry point: the bytes are a .debug_line section, as a target's
 * binary or debug file may hold it; they are also its .debug_line_str and
 * .debug_str, so that names' offsets land somewhere. Indexes its line
 * programs and looks up the addresses its own 8-byte words give (the
 * operands of DW_LNE_set_address among them), as the resolver does for
 * sampled addresses (line_programs.h). Any crash, leak or out-of-bounds
 * read is a bug. Seeded with the .debug_line of a program gcc builds with
 * -g (DWARF 5), with -gdwarf-4, and of libc's debug file (fuzz/make-seeds). */
#include "line_programs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LOOKUPS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct line_sections sections = {.line = data,
					 .line_size = size,
					 .line_str = data,
					 .line_str_size = size,
					 .str = data,
					 .str_size = size};
	struct line_programs *programs = line_programs_index(&sections);

	for (size_t i = 0; programs && i < LOOKUPS && i * 8 + 8 <= size; i++) {
		struct source_line line;
		bool relative_to_unit;
		uint64_t address;

		memcpy(&address, data + i * 8, sizeof(address));
		line_programs_find(programs, address, &line, &relative_to_unit);
		line_programs_find(programs, address + (data[i] & 0x3f), &line, &relative_to_unit);
	}
	line_programs_free(programs);
	return 0;
}
