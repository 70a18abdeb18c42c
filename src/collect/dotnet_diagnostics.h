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
 * fails the collection. Returns true when profcpu turned them on: the
 * target did not write them of its own accord (DOTNET_PerfMapEnabled in its
 * environment; where that cannot be read, either file written since it
 * started), so they are to be turned off when done
 * (dotnet_turn_off_perfmaps). */
bool dotnet_ensure_perfmap(const struct target_process *target, FILE *log);

/* The same, but where neither the IPC nor a perf map the target writes
 * itself will name its JIT code, sets *unnamed and puts the IPC's reason in
 * `why` instead of warning: the caller names it another way
 * (memory_perfmap.h) or warns. */
bool dotnet_ensure_perfmap_else(const struct target_process *target, FILE *log, char *why,
				size_t why_size, bool *unnamed);

/* A process whose perf map and jitdump profcpu turned on: its pid and start
 * time (target_process_start_ticks; a reused pid is another process). */
struct switched_perfmap {
	pid_t pid;
	unsigned long long start_ticks;
};

/* How long, in all, runtimes are waited on to turn their perf maps off:
 * the IPC's own 3 s a call, but once for them all. */
#define DOTNET_TURN_OFF_MS 3000

/* Turns off the perf map and jitdump (DisablePerfMap, .NET 8 and later) of
 * each of the `count` `processes` still running, all at once: every runtime
 * is asked before any answer is awaited, and none past `timeout_ms` in all,
 * so a stopped or hostile target holds nothing up longer. The files stay
 * where they are, whole: they stop growing. Says each in `log` (and on
 * stderr when `say`). Returns how many runtimes said yes. */
size_t dotnet_turn_off_perfmaps(const struct switched_perfmap *processes, size_t count,
				int timeout_ms, bool say, FILE *log);

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
