#include "allocation.h"

#include <stdio.h>
#include <stdlib.h>

static void out_of_memory(size_t size)
{
	fprintf(stderr, "profcpu: out of memory allocating %zu bytes\n", size);
	abort();
}

void *fg_malloc(size_t size)
{
	void *pointer = malloc(size ? size : 1);

	if (!pointer)
		out_of_memory(size);
	return pointer;
}

void *fg_calloc(size_t count, size_t size)
{
	void *pointer = calloc(count ? count : 1, size ? size : 1);

	if (!pointer)
		out_of_memory(count * size);
	return pointer;
}

void *fg_realloc(void *pointer, size_t size)
{
	pointer = realloc(pointer, size ? size : 1);
	if (!pointer)
		out_of_memory(size);
	return pointer;
}

void fg_grow(void **array, size_t *capacity, size_t needed, size_t element_size)
{
	size_t new_capacity;

	if (needed <= *capacity)
		return;
	new_capacity = *capacity ? *capacity * 2 : 16;
	while (new_capacity < needed)
		new_capacity *= 2;
	*array = fg_realloc(*array, new_capacity * element_size);
	*capacity = new_capacity;
}
