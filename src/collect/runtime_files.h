/* The files a JIT runtime writes for profilers in the target's /tmp (or
 * where DOTNET_PerfMapJitDumpPath says, runtime_directories.h): the
 * perf map (perf-<nspid>.map), the jitdump (jit-<nspid>.dump) and, up to
 * .NET 8, the perfinfo map (perfinfo-<nspid>.map). They are followed while
 * the target is sampled and copied into the capture folder under the pid
 * the capture knows (perf-<pid>.map, ...), so that names survive the target
 * and a later postprocess gives the same names as the live one.
 *
 * A perf map line has no time, but the map only grows: each poll that finds
 * it longer appends "BYTES NANOSECONDS" to perf-<pid>.map.times (by that
 * CLOCK_MONOTONIC time the map held that many bytes), which dates each line
 * to within one poll. A file written again from its start (the runtime's
 * perf map switched on again) is copied after what was copied before, so
 * code freed before is still named; a jitdump's new header is dropped, and
 * the record the old one was cut inside is padded to its end. A .NET
 * jitdump that stops inside a record (the runtime fails to write a 64 KB
 * stub block, and never writes to it again) is asked for again, whole,
 * through the diagnostics IPC.
 *
 * The files belong to the target: opened inside its root, non-blocking,
 * regular files only, at most RUNTIME_FILE_LIMIT bytes each. A file older
 * than the target was left by an earlier process with the same pid: it is
 * not copied. */
#ifndef PROFCPU_RUNTIME_FILES_H
#define PROFCPU_RUNTIME_FILES_H

#include "target_process.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define RUNTIME_FILE_LIMIT (256ull << 20)

struct runtime_files;

struct jitdump;

/* Starts following the files of `target` into `dir`, reading what they hold
 * now; what happens goes to `log`. The jitdump's copy is parsed into
 * `jitdump` (jitdump_new(), still empty) as it is written: the stack walks
 * read it there instead of parsing the file again. `target` and `jitdump`
 * must outlive the result. NULL when the target's files cannot be reached
 * (no root). */
struct runtime_files *runtime_files_follow(const struct target_process *target, const char *dir,
					   struct jitdump *jitdump, FILE *log);

/* Copies what was appended since the last poll; does nothing when the last
 * poll was less than 50 ms ago. Cheap enough to call for every record. */
void runtime_files_poll(struct runtime_files *files);

/* Copies what the jitdump gained unless it was read after `time`
 * (CLOCK_MONOTONIC, the samples' clock): a runtime writes a method's record
 * before the method runs, so the parse then holds whatever a sample taken
 * by `time` ran. False when there is no jitdump to read, or its copy
 * stopped. */
bool runtime_files_read_jitdump(struct runtime_files *files, uint64_t time);

/* Copies the rest, says in the log what was copied (and whether the
 * jitdump ends inside a record), and frees `files`. */
void runtime_files_finish(struct runtime_files *files);

#endif
