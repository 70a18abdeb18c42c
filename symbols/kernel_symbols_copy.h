/* Which listing names a capture's kernel frames: /proc/kallsyms, or the
 * capture's own copy of the lines it used.
 *
 * `collect` writes into the capture folder, as KERNEL_SYMBOLS_COPY, the
 * /proc/kallsyms lines that name its kernel frames (each with the line
 * after it, where it ends), under two comment lines saying which boot of
 * which kernel they come from:
 *
 *     # boot_id 67f307f8-d601-4af4-9c67-aec7e9fc3dee
 *     # release 6.18.44-fc-v669
 *     ffffffff821ef620 T do_syscall_64
 *     ffffffff821ef7d0 t do_int80_emulation
 *
 * `postprocess` names kernel frames from /proc/kallsyms while this machine
 * runs the boot that made the capture and shows addresses, and from the copy
 * otherwise: after a reboot, on another machine, or where kallsyms is hidden
 * (kernel.kptr_restrict, no CAP_SYSLOG). */
#ifndef PROFCPU_KERNEL_SYMBOLS_COPY_H
#define PROFCPU_KERNEL_SYMBOLS_COPY_H

#include "kernel_symbols.h"

#include <stdbool.h>
#include <stdio.h>

#define KERNEL_SYMBOLS_COPY "kallsyms"

/* The kernel symbols for a capture whose copy is (or is to be) at
 * `copy_path`; NULL: /proc/kallsyms alone. With `write_copy` (collect) the
 * copy is written anew from /proc/kallsyms as frames are named (a stale one
 * is removed when kallsyms shows no addresses); else it is read as above.
 * Says on `log` where names come from when not from this kernel, and why
 * none do. NULL when nothing names kernel addresses. */
struct kernel_symbols *kernel_symbols_for_capture(const char *copy_path, bool write_copy,
						  FILE *log);

#endif
