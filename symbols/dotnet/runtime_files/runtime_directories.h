/* Where a .NET runtime puts what a profiler reads, as it decides from the
 * environment the process started with: paths as the target sees them,
 * absolute, to be opened inside its root (target_root.h). A relative or
 * empty setting, or an unreadable environment, gives /tmp. */
#ifndef PROFCPU_RUNTIME_DIRECTORIES_H
#define PROFCPU_RUNTIME_DIRECTORIES_H

#include <stddef.h>
#include <sys/types.h>

/* The folder of the perf map, jitdump and perfinfo map of `pid`:
 * DOTNET_PerfMapJitDumpPath (or COMPlus_PerfMapJitDumpPath), else /tmp
 * (since .NET 8 the runtime ignores TMPDIR for them). Without a trailing
 * '/', so "/" gives "". */
void runtime_perfmap_directory(pid_t pid, char *directory, size_t size);

/* The folder of the diagnostics socket of `pid`: TMPDIR, else /tmp; as
 * above. */
void runtime_socket_directory(pid_t pid, char *directory, size_t size);

#endif
