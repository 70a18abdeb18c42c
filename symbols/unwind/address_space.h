/* The executable mappings of one process over time, as MMAP/MMAP2 records
 * describe them. A new mapping replaces whatever it overlaps, as mmap(2)
 * does. */
#ifndef PROFCPU_ADDRESS_SPACE_H
#define PROFCPU_ADDRESS_SPACE_H

#include "mapped_file.h"

#include <stdint.h>

struct mapping {
	uint64_t start, end; /* [start, end) */
	uint64_t page_offset;
	char *path; /* as the process sees it; "//anon" for anonymous memory */
	struct file_identity identity;
};

struct address_space;

struct address_space *address_space_new(void);
/* A copy, for a child made by fork(). */
struct address_space *address_space_clone(const struct address_space *space);
void address_space_free(struct address_space *space);

void address_space_add(struct address_space *space, uint64_t start, uint64_t length,
		       uint64_t page_offset, const struct mapped_file *file);

/* The mapping containing `address`, or NULL. */
const struct mapping *address_space_find(const struct address_space *space, uint64_t address);

#endif
