/* Which listing names a capture's kernel frames: /proc/kallsyms, or the
 * capture's own copy of the lines it used.
 *
 * `collect` writes into the capture folder, as KERNEL_SYMBOLS_COPY, the
 * /proc/kallsyms lines that name its kernel frames (each with the line
 * after it, where it ends), under two comment lines saying which boot of
 * which kernel they come from, and ends it with "# complete" once the
 * capture's replay is done:
 *
 *     # boot_id 67f307f8-d601-4af4-9c67-aec7e9fc3dee
 *     # release 6.18.44-fc-v669
 *     ffffffff821ef620 T do_syscall_64
 *     ffffffff821ef7d0 t do_int80_emulation
 *     # complete
 *
 * `postprocess` names kernel frames from the copy: it names every address
 * of the capture as kallsyms did, and reading it costs nothing beside
 * /proc/kallsyms, whose lines the kernel formats as they are read. Only a
 * copy that is not complete (collect was interrupted) gives way to
 * /proc/kallsyms, while this machine runs the boot that made the capture
 * and shows addresses. */
#ifndef PROFCPU_KERNEL_SYMBOLS_COPY_H
#define PROFCPU_KERNEL_SYMBOLS_COPY_H

#include "kernel_symbols.h"

#include <stdbool.h>
#include <stdio.h>

#define KERNEL_SYMBOLS_COPY "kallsyms"

/* The kernel symbols for a capture whose copy is (or is to be) at
 * `copy_path`; NULL: /proc/kallsyms alone. With `write_copy` (collect) the
 * copy is written anew from /proc/kallsyms as frames are named (a stale one
 * is removed first); else it is read as above.
 * Says on `log` where names come from when not from this kernel, and why
 * none do. NULL when nothing names kernel addresses. */
struct kernel_symbols *kernel_symbols_for_capture(const char *copy_path, bool write_copy,
						  FILE *log);

/* Starts a new copy at `copy_path` for the next replay into the same
 * folder (collect's --push-interval), after kernel_symbols_finish_copy(). */
void kernel_symbols_start_copy(struct kernel_symbols *symbols, const char *copy_path, FILE *log);

/* Once the capture's replay has named every kernel frame: ends the copy
 * that kernel_symbols_for_capture() started (it is written under
 * `copy_path`.partial until then) and gives it its name, or removes it
 * and says why on `log` when it could not be written whole (a full disk).
 * Nothing when no copy is being written. */
void kernel_symbols_finish_copy(struct kernel_symbols *symbols, const char *copy_path, FILE *log);

#endif
