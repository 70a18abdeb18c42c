#include "buffer.h"

#include <stdint.h>
#include <stdlib.h>

bool buffer_reserve(void **buffer, size_t *capacity, size_t needed, size_t element_size)
{
	size_t new_capacity = *capacity ? *capacity : 64;
	void *grown;

	if (needed <= *capacity)
		return true;
	while (new_capacity < needed) {
		if (new_capacity > SIZE_MAX / 2 / element_size)
			return false;
		new_capacity *= 2;
	}
	grown = realloc(*buffer, new_capacity * element_size);
	if (!grown)
		return false;
	*buffer = grown;
	*capacity = new_capacity;
	return true;
}
