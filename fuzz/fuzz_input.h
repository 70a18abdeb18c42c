/* Helpers shared by the fuzz targets (libFuzzer entry points, one file
 * each: fuzz_NAME.c defines LLVMFuzzerTestOneInput for one parser of outside
 * input). */
#ifndef PROFCPU_FUZZ_INPUT_H
#define PROFCPU_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The input as a file: a memfd holding `data`, named by `path`
 * ("/proc/self/fd/N") for parsers that take a path. Returns the fd (close
 * it when done); aborts when the kernel gives no memfd. */
int fuzz_input_file(const uint8_t *data, size_t size, char path[32]);

/* A stream on /dev/null for outputs the fuzz target writes and discards. */
FILE *fuzz_null_output(void);

#endif
