/* Outputs, one file each, all read from the one symbolized profile. Each
 * returns 0, or -1 with errno set when the file cannot be written. */
#ifndef PROFCPU_EMIT_H
#define PROFCPU_EMIT_H

#include "profile.h"

#include <stdio.h>

/* Folded stacks: "root;...;leaf COUNT", one line per unique stack. */
int emit_folded(const struct folded_profile *folded, FILE *out);

/* The samples in the text layout of `perf script`, as perfcollect asks for
 * it (comm pid/tid [cpu] time: period event:, then one TAB-indented
 * "ADDR SYMBOL (DSO)" line per frame, leaf first, then a blank line). */
int emit_perf_script(const struct profile *profile, FILE *out);

/* The interactive flame graph SVG of the folded stacks. */
int emit_flamegraph(const struct folded_profile *folded, const char *title, const char *subtitle,
		    FILE *out);

/* A gzip-compressed tar of `files` (names inside `dir`) stored under the
 * folder `top` in the archive. Files that do not exist are left out. */
int emit_tar_gz(const char *dir, const char *const *files, size_t file_count, const char *top,
		const char *archive_path);

#endif
