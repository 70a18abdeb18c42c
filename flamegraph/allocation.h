/* Allocation for the flamegraph library: like profcpu's xmalloc, it never
 * returns NULL (running out of memory aborts with a message). */
#ifndef PROFCPU_FLAMEGRAPH_ALLOCATION_H
#define PROFCPU_FLAMEGRAPH_ALLOCATION_H

#include <stddef.h>

void *fg_malloc(size_t size);
void *fg_calloc(size_t count, size_t size);
void *fg_realloc(void *pointer, size_t size);

/* Grows `*array` (`*capacity` elements of `element_size`) to hold `needed`. */
void fg_grow(void **array, size_t *capacity, size_t needed, size_t element_size);

#endif
