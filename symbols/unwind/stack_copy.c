#include "stack_copy.h"

#include <string.h>

bool stack_copy_read(const struct stack_copy *copy, uint64_t address, uint64_t *value)
{
	uint64_t offset = address - copy->start;

	if (address < copy->start || copy->size < sizeof(*value) ||
	    offset > copy->size - sizeof(*value))
		return false;
	memcpy(value, copy->bytes + offset, sizeof(*value));
	if (copy->reads) {
		if (copy->reads->end < offset + sizeof(*value))
			copy->reads->end = (size_t)offset + sizeof(*value);
		if (copy->reads->count < STACK_READS_LISTED)
			copy->reads->offsets[copy->reads->count] = (uint32_t)offset;
		copy->reads->count++;
	}
	return true;
}
