/* A jitdump, /tmp/jit-<pid>.dump, as .NET (DOTNET_PerfMapEnabled=1 or 2, or
 * the diagnostics IPC's EnablePerfMap) and other JIT runtimes write it for
 * perf (tools/perf/Documentation/jitdump-specification.txt in Linux): a
 * header, then records, each with a CLOCK_MONOTONIC timestamp. Code-load
 * records name a code range from their time on (.NET writes one per
 * jitted method, one per ReadyToRun method it has prepared, "[PreJIT]",
 * and "stub ..." ones); code-move records move a range; debug-info,
 * unwinding-info and close records are read past.
 *
 * The file grows while the runtime runs and may end in a half-written
 * record: jitdump_add_bytes() takes the bytes in any pieces and keeps an
 * incomplete record for the next call. The file belongs to the target and
 * is hostile input: every size is checked against its record, a record
 * whose size cannot be trusted ends the parsing (there is no way to find
 * the next one), and memory stays bounded by the names kept. */
#ifndef PROFCPU_JITDUMP_H
#define PROFCPU_JITDUMP_H

#include "code_ranges.h"
#include "windows_unwind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jitdump;

struct jitdump *jitdump_new(void);
/* A parser that keeps nothing but what jitdump_summarize() says (no names,
 * ranges or prologs): whether a file is a jitdump that ends where its last
 * record ends, at a fraction of a whole parse's cost. */
struct jitdump *jitdump_new_framing(void);
void jitdump_free(struct jitdump *dump);

/* Parses the next `length` bytes of the file. */
void jitdump_add_bytes(struct jitdump *dump, const void *bytes, size_t length);

/* The same, and overwrites with zeros the machine code that code-load
 * records carry in `bytes`, but for each code's first
 * JIT_PROLOG_CODE_BYTES (its prolog, for unwinding): a copy written from
 * them keeps names, ranges, sizes, times and prologs. The code is about
 * half of a .NET jitdump and deflates four times slower than the rest:
 * cleared, the copy costs the capture's archives a fifth of the time and
 * space. The parse is the same as the copy's would be. */
void jitdump_add_bytes_clearing_code(struct jitdump *dump, void *bytes, size_t length);

/* Reads what was appended to `fd` since the last call, at most `limit`
 * bytes in all (a file that never ends). Returns 0, or -1 with errno set
 * when reading fails (records read so far are kept). */
int jitdump_read_more(struct jitdump *dump, int fd, uint64_t limit);

/* The code range that held `address` at `time` (code_ranges_lookup). */
bool jitdump_lookup(struct jitdump *dump, uint64_t address, uint64_t time,
		    struct code_range *found);

/* How to unwind through the code that held `address` at `time`: the unwind
 * info its prolog gives (jit_prolog.h), and the code from the address on
 * when the method is short enough to be kept whole (else NULL: without it
 * an epilog cannot be told, so only a caller's frame can use the info).
 * Valid until more bytes are added. False when the code is unknown, its
 * prolog was not read, or the jitdump's machine is not x86-64. */
bool jitdump_unwind_at(struct jitdump *dump, uint64_t address, uint64_t time,
		       struct windows_unwind_code_at *unwind);

struct jitdump_summary {
	bool valid; /* the header was read and is a jitdump */
	bool timed; /* times are CLOCK_MONOTONIC, not the CPU's counter */
	uint64_t code_loads, code_moves, other_records;
	uint64_t bytes;		   /* parsed so far */
	uint64_t incomplete_bytes; /* of a record that has not ended yet */
	uint64_t missing_bytes;	   /* that record's claim past what was read */
	const char *error;	   /* why parsing stopped, or NULL */
};

/* What was read: the caller says whether an incomplete record at the end is
 * one still being written or a file cut off. */
void jitdump_summarize(const struct jitdump *dump, struct jitdump_summary *summary);

#endif
