/* Writing a zip file (PKWARE's APPNOTE): members stored or deflated with
 * deflate_stream.h, zip64 where a size or an offset needs it. Its own
 * writer rather than minizip's: a stored member goes from its file to the
 * zip in large reads and writes, its CRC-32 by ISA-L, where minizip copied
 * it byte by byte and summed it a second time with zlib; the trace zip
 * stores perf.data.txt, the largest output (a fifth of a whole-machine
 * collect's CPU went there, docs/BENCHMARKS.md). */
#ifndef PROFCPU_ZIP_WRITER_H
#define PROFCPU_ZIP_WRITER_H

#include <stdbool.h>
#include <sys/stat.h>

struct zip_writer;

/* Creates the zip at `path`. NULL with errno set when it cannot. */
struct zip_writer *zip_writer_open(const char *path);

/* Adds the file open at `fd`, whose status is `status` (its time and Unix
 * permissions go into the zip), as `name`: stored as it is with `store`,
 * else deflated. Returns 0, or -1 with errno set. */
int zip_writer_add(struct zip_writer *zip, const char *name, int fd, const struct stat *status,
		   bool store);

/* Writes the central directory and closes the zip, whatever came before.
 * Returns 0, or -1 with errno set. */
int zip_writer_close(struct zip_writer *zip);

#endif
