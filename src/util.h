/* Helpers every part of the profcpu command uses: messages and allocation
 * that cannot fail silently. */
#ifndef PROFCPU_UTIL_H
#define PROFCPU_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* One line on stderr, prefixed with "profcpu: " ("profcpu: warning: "). */
void report_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
void report_warning(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* From now on, errors and warnings also go to `log` (a capture's log, so
 * the log of a trace says what went wrong); NULL stops that. */
void report_also_to(FILE *log);

/* report_error() and exit(1). */
void die(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Writes `length` bytes of `text` with every control character as '?':
 * names come from the profiled process (its comm, its perf map), and an
 * escape sequence in them must not drive the user's terminal. */
void write_printable(const char *text, size_t length, FILE *out);

/* Replaces control characters in `text` with '?', in place. */
void make_printable(char *text);

/* Allocation that dies with a message when memory runs out. */
void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *pointer, size_t size);
char *xstrdup(const char *string);
char *xasprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Grows `*array` (of `*capacity` elements of `element_size`) to hold at
 * least `needed` elements. */
void grow_array(void **array, size_t *capacity, size_t needed, size_t element_size);

/* A growing list of strings it does not own. */
struct string_list {
	const char **items;
	size_t count, capacity;
};

void string_list_append(struct string_list *list, const char *item);
void string_list_clear(struct string_list *list);

/* Removes the folder `dir` and the files in it (no subfolders: a capture
 * folder or a spooled period). Errors are ignored. */
void remove_flat_folder(const char *dir);

/* Writes all `size` bytes to `fd`, again after a signal. Returns 0, or -1
 * with errno set. */
int write_whole(int fd, const void *bytes, size_t size);

/* What `clock` (CLOCK_MONOTONIC, CLOCK_REALTIME, ...) reads now, in
 * nanoseconds. */
uint64_t clock_nanoseconds(clockid_t clock);

/* The regular file at `path` (opened with O_RDONLY and `flags`, such as
 * O_NOFOLLOW), whole: malloc'd, `*size` bytes and a NUL after them. NULL
 * with errno set when it cannot be read, is not a regular file (EINVAL)
 * or holds more than `max_size` bytes (EFBIG). */
unsigned char *read_whole_file(const char *path, int flags, size_t max_size, size_t *size);

#endif
