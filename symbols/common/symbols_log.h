/* The one way symbols/ reports a problem: a line on the caller's log, naming
 * the file and what to do about it. */
#ifndef PROFCPU_SYMBOLS_LOG_H
#define PROFCPU_SYMBOLS_LOG_H

#include <stdio.h>

/* Writes "profcpu: symbols: <formatted>\n" to `log`; nothing when NULL. */
void symbols_log(FILE *log, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
