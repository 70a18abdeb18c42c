/* Whole files in and out, for the unit tests that read real binaries
 * (assemblies, PDBs): a failure fails the test. */
#ifndef PROFCPU_TESTS_WHOLE_FILE_H
#define PROFCPU_TESTS_WHOLE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of `path` (the caller frees them) and in *size their count. */
uint8_t *read_whole(const char *path, size_t *size);

/* Writes `size` bytes of `data` as the whole of `path`. */
void write_whole(const char *path, const uint8_t *data, size_t size);

#endif
