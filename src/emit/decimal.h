/* Numbers in decimal without printf, whose cost showed in outputs that
 * print a few numbers for each of a million samples. */
#ifndef PROFCPU_DECIMAL_H
#define PROFCPU_DECIMAL_H

#include <stdbool.h>
#include <stdint.h>

/* `value` in decimal at `*cursor`, at least `width` characters wide,
 * padded on the left with `pad` or, when `left_aligned`, on the right with
 * spaces: printf's %5u, %03u and %-5u. Moves `*cursor` past it; the room
 * needed is 20 characters or `width`, the larger. */
void decimal_append_padded(char **cursor, uint64_t value, int width, char pad, bool left_aligned);

/* `value` in decimal at `*cursor` (room for 20 characters): printf's %u. */
void decimal_append(char **cursor, uint64_t value);

#endif
