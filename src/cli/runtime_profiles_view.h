/* What profcpu view shows of the .NET runtime's profiles a trace zip holds
 * (contention_folded_stacks.out, exceptions_folded_stacks.out,
 * alloc_folded_stacks.out, waits_folded_stacks.out, written by collect): each one's total and its
 * heaviest stacks, by their frames at the leaf end. */
#ifndef PROFCPU_RUNTIME_PROFILES_VIEW_H
#define PROFCPU_RUNTIME_PROFILES_VIEW_H

#include <stddef.h>
#include <stdio.h>

/* Prints those of the zip at `path` to `out`, `top` stacks each. Returns
 * how many profiles it printed, or -1 after printing why one is
 * unreadable. */
int runtime_profiles_view(const char *path, size_t top, FILE *out);

#endif
