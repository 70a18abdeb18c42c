/* Names for code in ELF files (executables, shared libraries) and in the
 * kernel.
 *
 * Modules are loaded lazily, on the first lookup that hits them, and cached
 * by path; each module's symbols come from the best debug information found
 * for it (its own .symtab, a separate debug file whose build-id matches, ...,
 * or .dynsym). C++ names are demangled. Files named by the target are opened
 * inside its root (target_root.h). Every file is untrusted input: a malformed
 * ELF gives no names, never a crash. */
#ifndef PROFCPU_NATIVE_SYMBOLS_H
#define PROFCPU_NATIVE_SYMBOLS_H

#include "build_id.h"
#include "native_frame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mapped_file.h"

struct call_frame_info;

/* Where separate debug files are looked for, and in which order:
 * debug_file_search.h. Two environment variables add to the configuration,
 * read by native_symbols_new():
 *   PROFCPU_SYMBOL_PATH  colon-separated symbol folders, searched after
 *                        symbol_dirs
 *   DEBUGINFOD_URLS      space-separated debuginfod servers, asked after
 *                        symbol_server
 * Downloads happen only when symbol_server or DEBUGINFOD_URLS names a
 * server, and the config is not offline. */
struct native_symbols_config {
	int target_root_fd;		/* target_root_open(), or -1: own file system */
	pid_t live_pid;			/* the running target, whose /proc/<pid>/map_files holds the
					   files it maps; 0 when replaying a capture */
	const char *const *symbol_dirs; /* user folders to search, NULL-terminated; may be NULL */
	const char *symbol_server;	/* URL, or NULL */
	bool offline;	       /* no server, whatever DEBUGINFOD_URLS says: collect's recording */
	const char *cache_dir; /* for downloaded debug files; NULL: ~/.cache/profcpu/symbols */
	bool inline_frames;    /* add inlined frames from DWARF */
	/* The capture folder, which holds the copy of the kernel symbols the
	 * capture used (kernel_symbols_copy.h), or NULL: /proc/kallsyms
	 * alone. The resolver sets it from its own config. collect writes the
	 * copy (write_kernel_symbols_copy); postprocess reads it. */
	const char *capture_dir;
	bool write_kernel_symbols_copy;
	FILE *log; /* where to say what was (not) found; may be NULL */
};

struct native_symbols;

/* Whether native_symbols made with `config` may download debug files. */
bool native_symbols_downloads(const struct native_symbols_config *config);

/* The strings of `config` are copied; target_root_fd and log must stay open
 * until native_symbols_free(). */
struct native_symbols *native_symbols_new(const struct native_symbols_config *config);
void native_symbols_free(struct native_symbols *symbols);

/* Names the code at `file_offset` bytes into the mapped ELF file `file` (a
 * path as the target sees it, and the identity the mapping gives: see
 * mapped_file.h for how the very file is found). Fills up to `max_frames` frames,
 * innermost first (inlined frames, then the function that holds them), and
 * returns how many; 0 when nothing names the address. */
size_t native_symbols_lookup(struct native_symbols *symbols, const struct mapped_file *file,
			     uint64_t file_offset, struct native_frame *frames, size_t max_frames);

/* The call frame information of the mapped ELF file `file` (call_frame_info.h),
 * loaded on the first call for that file and cached with it, and in
 * `file_address` the file's virtual address of `file_offset`. NULL when the
 * file has no CFI, in itself or in its debug file, or the offset lies
 * outside its loaded segments. */
struct call_frame_info *native_symbols_call_frame_info(struct native_symbols *symbols,
						       const struct mapped_file *file,
						       uint64_t file_offset,
						       uint64_t *file_address);

/* Ends a round of lookups (a capture of a long-lived resolver): the files
 * no lookup asked about in the last `rounds` rounds are freed, and read
 * again when asked about later. */
void native_symbols_forget_unused(struct native_symbols *symbols, unsigned rounds);

/* The GNU build-id of the mapped ELF `file`, in hex, once a lookup loaded it.
 * False when it has none or was not looked up. */
bool native_symbols_build_id(struct native_symbols *symbols, const struct mapped_file *file,
			     char hex[BUILD_ID_HEX_MAX]);

/* Names a kernel address from /proc/kallsyms, or the capture's copy of it
 * (see the config). Returns false when unknown or when kallsyms hides
 * addresses. */
bool native_symbols_lookup_kernel(struct native_symbols *symbols, uint64_t address,
				  struct native_frame *frame);

/* With write_kernel_symbols_copy, once every kernel frame of the capture
 * is named: the copy is complete, and takes its name. */
void native_symbols_finish_kernel_copy(struct native_symbols *symbols);

#endif
