/* Growing arrays inside the symbols library, which reports running out of
 * memory to its callers instead of exiting. */
#ifndef PROFCPU_SYMBOLS_BUFFER_H
#define PROFCPU_SYMBOLS_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

/* Makes `*buffer` (of `*capacity` elements of `element_size` bytes) hold at
 * least `needed` elements, doubling it. Returns false, leaving the buffer as
 * it was, when memory runs out. */
bool buffer_reserve(void **buffer, size_t *capacity, size_t needed, size_t element_size);

#endif
