/* Kernel function names from a kallsyms listing (/proc/kallsyms, or a
 * capture's copy of the lines it used), read only as far as the addresses
 * asked for need.
 *
 * Reading /proc/kallsyms is the cost: the kernel formats each of its
 * 100,000 and more lines as it is read. It lists the core kernel first,
 * sorted by address (scripts/kallsyms sorts them when the kernel is built),
 * then the symbols of modules, ftrace trampolines, BPF programs and kprobes,
 * each in its own order. Those live in the module area, which lies outside
 * the core kernel's range (above it on x86-64, below on arm64). So an
 * address between two core symbols already read is named at once; any other
 * address reads the listing to its end, and from then on the table is
 * whole. Either way the answer is the one the whole listing gives: the
 * text symbol (types t, T, w, W) starting last at or before the address, the
 * first listed when several start there; past the last symbol only its own
 * address. */
#ifndef PROFCPU_KERNEL_SYMBOLS_H
#define PROFCPU_KERNEL_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* At most this many lines are read from a listing: a real one holds a few
 * hundred thousand, a copy in a capture folder may be anything. */
#define KERNEL_SYMBOLS_MAX_LINES 2000000

struct kernel_symbols;

/* Takes over `listing` (lines "ADDRESS TYPE NAME[\t[MODULE]]"; others are
 * skipped) and reads it whole, or `in_part` as lookups need: only for a
 * listing whose core kernel comes first in address order, as
 * /proc/kallsyms lists it (a copy lists lines in the order they were
 * used). Returns NULL, closing it, when the listing names no address:
 * kallsyms shows zeros to readers without CAP_SYSLOG, and to everyone when
 * kernel.kptr_restrict is 2. */
struct kernel_symbols *kernel_symbols_open(FILE *listing, bool in_part);

/* Closes the listing and the copy; NULL is fine. */
void kernel_symbols_free(struct kernel_symbols *symbols);

/* Names `address`: the name (valid until kernel_symbols_free) and the
 * offset from its start. False when no symbol covers it. */
bool kernel_symbols_find(struct kernel_symbols *symbols, uint64_t address, const char **name,
			 uint64_t *offset);

/* From now on writes each symbol kernel_symbols_find() answers with into
 * `copy` as its listing line, once, with the symbol after it (where it
 * ends), so that the copy names those addresses as the listing did. Each
 * line is flushed when written; kernel_symbols_end_copy() writes
 * `last_line`, to mark the copy whole. Takes over `copy`. */
void kernel_symbols_copy_to(struct kernel_symbols *symbols, FILE *copy, const char *last_line);

/* Whether kernel_symbols_copy_to() gave `symbols` a copy not yet ended. */
bool kernel_symbols_copying(const struct kernel_symbols *symbols);

/* Writes the copy's last line and closes it (while copying). Returns 0
 * when every line of it was written, else -1 with errno saying why. */
int kernel_symbols_end_copy(struct kernel_symbols *symbols);

/* Reads the listing (opened in part) on to the end of its core kernel's
 * lines, the run in address order at its start, and writes them into `out`
 * as a table (kernel_symbols_table.h), one per address: they name every
 * core address as the listing does. False when they could not be read or
 * written. */
bool kernel_symbols_write_core(struct kernel_symbols *symbols, FILE *out);

struct kernel_symbols_table;

/* Symbols named from `table` (taken over: a boot's core kernel, as
 * kernel_symbols_write_core() wrote it) for the addresses it covers, and
 * for any other from the listing `open_listing` gives, read in part as
 * kernel_symbols_fall_back_to() says. NULL when memory runs out. */
struct kernel_symbols *kernel_symbols_open_table(struct kernel_symbols_table *table,
						 FILE *(*open_listing)(void));

/* For a listing that holds part of another (a copy of its core kernel):
 * an address it does not cover makes the table read anew, in part, from
 * the listing `open_listing` gives (once; NULL: nothing more is read). */
void kernel_symbols_fall_back_to(struct kernel_symbols *symbols, FILE *(*open_listing)(void));

#endif
