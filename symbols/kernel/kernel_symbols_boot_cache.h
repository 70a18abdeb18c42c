/* /proc/kallsyms read through a copy of its core kernel's lines kept for
 * the rest of the boot.
 *
 * The kernel formats each kallsyms line as it is read: the 100,000 and more
 * lines of the core kernel cost every capture about 40 ms of system time,
 * a sixth of a short collect, for names that do not change until the next
 * boot, and parsing them as text again cost a tenth. So the first capture
 * of a boot writes the core kernel's text symbols as a table sorted by
 * address (kernel_symbols_write_core, kernel_symbols_table.h) into the
 * user's cache folder, $XDG_CACHE_HOME/profcpu or ~/.cache/profcpu (kept
 * 0700, the file 0600: kernel addresses are for readers with CAP_SYSLOG
 * only), and later ones map it from there, after three header lines:
 *
 *     # profcpu: the core kernel's /proc/kallsyms text symbols, a table
 *     # boot_id 67f307f8-d601-4af4-9c67-aec7e9fc3dee
 *     # first ffffffff81000000 T srso_alias_untrain_ret
 *     (the table)
 *
 * The copy is used only on the boot that wrote it and while /proc/kallsyms
 * shows this reader the same first line (its addresses, so the same kernel
 * layout; zeros to a reader without CAP_SYSLOG, who gets no names as
 * before). An address outside the core kernel (a module, BPF, ftrace) is
 * read from /proc/kallsyms itself, as without the copy. A copy that is not
 * a regular file of this user, or a folder others may write, is not used. */
#ifndef PROFCPU_KERNEL_SYMBOLS_BOOT_CACHE_H
#define PROFCPU_KERNEL_SYMBOLS_BOOT_CACHE_H

#include "kernel_symbols.h"

/* The kernel's symbols as kernel_symbols_open(/proc/kallsyms, in part)
 * gives them, from the boot's copy when there is a valid one, else from
 * /proc/kallsyms, writing the copy. `boot_id` is this boot's
 * (/proc/sys/kernel/random/boot_id). NULL when kallsyms names no address. */
struct kernel_symbols *kernel_symbols_open_kallsyms(const char *boot_id);

#endif
