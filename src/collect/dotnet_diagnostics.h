/* The perf map and jitdump of a .NET target. A .NET 8 or later runtime can
 * be asked, through its diagnostics IPC socket, to write both from now on:
 * it first writes every method it has prepared, jitted and ReadyToRun
 * ("[PreJIT]", which no perf map lists), then appends as code comes and
 * goes. JIT and precompiled frames are then named without a restart. */
#ifndef PROFCPU_DOTNET_DIAGNOSTICS_H
#define PROFCPU_DOTNET_DIAGNOSTICS_H

#include "target_process.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* When `target` runs .NET, asks its runtime to (re)write its perf map and
 * jitdump whole (EnablePerfMap, type 1), unless it already writes a whole
 * jitdump since it started. This also repairs the jitdump that
 * DOTNET_PerfMapEnabled=1 starts on .NET 10, which stops at the first stub
 * block; the perf map is rewritten too (older lines, of code since freed,
 * are dropped). Says what it did on stderr and in `log`, or warns why it
 * could not (report_warning): then a perf map the target writes anyway, or
 * the method rundown of its runtime events, still names JIT frames. Never
 * fails the collection. */
void dotnet_ensure_perfmap(const struct target_process *target, FILE *log);

/* The newest "dotnet-diagnostic-<pid>-<key>-socket" in the target's $TMPDIR
 * (its /tmp without one, runtime_directories.h),
 * opened as an O_PATH handle (connect through /proc/self/fd/N), or -1 with
 * errno set when there is none or it is not a socket. */
int dotnet_open_diagnostic_socket(const struct target_process *target);

/* Asks the runtime of `target` (.NET 8 or later) to write its perf map and
 * jitdump again from the start, whole: the repair for a jitdump that stopped
 * inside a record. Returns 0, or -1 with the reason in `why`. */
int dotnet_rewrite_runtime_files(const struct target_process *target, char *why, size_t why_size);

/* The runtime version of a .NET `target` (e.g. "10.0.0"), from the
 * ProcessInfo2 command of its diagnostics IPC. Returns false when it has no
 * diagnostics socket or gives no answer. */
bool dotnet_runtime_version(const struct target_process *target, char *version, size_t size);

/* Checks the runtime's reply to EnablePerfMap, `size` bytes as received
 * (any bytes: the reply comes from the target). Returns 0 when the runtime
 * said yes, or -1 with the reason in `why`. */
int dotnet_diagnostics_check_reply(const void *bytes, size_t size, char *why, size_t why_size);

#endif
