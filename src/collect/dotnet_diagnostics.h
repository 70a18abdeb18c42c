/* The perf map of a .NET target. A .NET 8 or later runtime started without
 * DOTNET_PerfMapEnabled can be asked, through its diagnostics IPC socket, to
 * write its perf map from now on (with the methods it jitted before): JIT
 * frames are then named without restarting the service. */
#ifndef PROFCPU_DOTNET_DIAGNOSTICS_H
#define PROFCPU_DOTNET_DIAGNOSTICS_H

#include "target_process.h"

#include <stdio.h>

/* When `target` runs .NET and has no perf map written since it started,
 * asks its runtime to start one. Says what it did on stderr and in `log`,
 * or warns why it could not (report_warning). Never fails the collection. */
void dotnet_ensure_perfmap(const struct target_process *target, FILE *log);

/* The newest "dotnet-diagnostic-<pid>-<key>-socket" in the target's /tmp,
 * opened as an O_PATH handle (connect through /proc/self/fd/N), or -1 with
 * errno set when there is none or it is not a socket. */
int dotnet_open_diagnostic_socket(const struct target_process *target);

#endif
