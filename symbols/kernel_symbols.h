/* Kernel function names from /proc/kallsyms. */
#ifndef PROFCPU_KERNEL_SYMBOLS_H
#define PROFCPU_KERNEL_SYMBOLS_H

#include "symbol_table.h"

#include <stdio.h>

/* Reads the text symbols (types t, T, w, W) of a kallsyms listing, each
 * "address type name [module]", into a new table; a symbol covers the
 * addresses up to the next one. Returns NULL when the listing has no usable
 * address: kallsyms shows zeros to callers without CAP_SYSLOG, or when
 * kernel.kptr_restrict is 2. */
struct symbol_table *kernel_symbols_read(FILE *kallsyms);

#endif
