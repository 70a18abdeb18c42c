/* The perf map of a .NET target. A .NET 8 or later runtime started without
 * DOTNET_PerfMapEnabled can be asked, through its diagnostics IPC socket, to
 * write its perf map from now on (with the methods it jitted before): JIT
 * frames are then named without restarting the service. */
#ifndef PROFCPU_DOTNET_DIAGNOSTICS_H
#define PROFCPU_DOTNET_DIAGNOSTICS_H

#include "target_process.h"

#include <stddef.h>
#include <stdio.h>

/* When `target` runs .NET and has no perf map written since it started,
 * asks its runtime to start one. Says what it did on stderr and in `log`,
 * or warns why it could not (report_warning). Never fails the collection. */
void dotnet_ensure_perfmap(const struct target_process *target, FILE *log);

/* Checks the runtime's reply to EnablePerfMap, `size` bytes as received
 * (any bytes: the reply comes from the target). Returns 0 when the runtime
 * said yes, or -1 with the reason in `why`. */
int dotnet_diagnostics_check_reply(const void *bytes, size_t size, char *why, size_t why_size);

#endif
