#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static FILE *message_log;

void report_also_to(FILE *log)
{
	message_log = log;
}

static void print_message(const char *prefix, const char *format, va_list arguments)
{
	va_list copy;

	if (message_log) {
		va_copy(copy, arguments);
		fprintf(message_log, "%s", prefix[0] ? prefix : "error: ");
		vfprintf(message_log, format, copy);
		fputc('\n', message_log);
		va_end(copy);
	}
	fprintf(stderr, "profcpu: %s", prefix);
	vfprintf(stderr, format, arguments);
	fputc('\n', stderr);
}

void report_error(const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	print_message("", format, arguments);
	va_end(arguments);
}

void report_warning(const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	print_message("warning: ", format, arguments);
	va_end(arguments);
}

void die(const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	print_message("", format, arguments);
	va_end(arguments);
	exit(1);
}

void *xmalloc(size_t size)
{
	void *pointer = malloc(size ? size : 1);

	if (!pointer)
		die("out of memory (%zu bytes)", size);
	return pointer;
}

void *xcalloc(size_t count, size_t size)
{
	void *pointer = calloc(count ? count : 1, size ? size : 1);

	if (!pointer)
		die("out of memory (%zu x %zu bytes)", count, size);
	return pointer;
}

void *xrealloc(void *pointer, size_t size)
{
	pointer = realloc(pointer, size ? size : 1);
	if (!pointer)
		die("out of memory (%zu bytes)", size);
	return pointer;
}

char *xstrdup(const char *string)
{
	char *copy = strdup(string);

	if (!copy)
		die("out of memory");
	return copy;
}

char *xasprintf(const char *format, ...)
{
	va_list arguments;
	char *result;

	va_start(arguments, format);
	if (vasprintf(&result, format, arguments) < 0)
		die("out of memory");
	va_end(arguments);
	return result;
}

void grow_array(void **array, size_t *capacity, size_t needed, size_t element_size)
{
	size_t new_capacity = *capacity ? *capacity : 16;

	if (needed <= *capacity)
		return;
	while (new_capacity < needed)
		new_capacity *= 2;
	*array = xrealloc(*array, new_capacity * element_size);
	*capacity = new_capacity;
}

void string_list_append(struct string_list *list, const char *item)
{
	grow_array((void **)&list->items, &list->capacity, list->count + 1, sizeof(*list->items));
	list->items[list->count++] = item;
}

void string_list_clear(struct string_list *list)
{
	free(list->items);
	*list = (struct string_list){0};
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void write_printable(const char *text, size_t length, FILE *out)
{
	size_t start = 0;

	for (size_t i = 0; i < length; i++) {
		if (!is_control((unsigned char)text[i]))
			continue;
		fwrite(text + start, 1, i - start, out);
		fputc('?', out);
		start = i + 1;
	}
	fwrite(text + start, 1, length - start, out);
}

void make_printable(char *text)
{
	for (; *text; text++)
		if (is_control((unsigned char)*text))
			*text = '?';
}

void remove_flat_folder(const char *dir)
{
	DIR *directory = opendir(dir);
	struct dirent *entry;

	while (directory && (entry = readdir(directory)))
		if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
			unlinkat(dirfd(directory), entry->d_name, 0);
	if (directory)
		closedir(directory);
	rmdir(dir);
}

int write_whole(int fd, const void *bytes, size_t size)
{
	const char *next = bytes;

	while (size) {
		ssize_t written = write(fd, next, size);

		if (written < 0 && errno == EINTR)
			continue;
		if (written < 0)
			return -1;
		next += written;
		size -= (size_t)written;
	}
	return 0;
}

uint64_t clock_nanoseconds(clockid_t clock)
{
	struct timespec now = {0};

	clock_gettime(clock, &now);
	return (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
}

unsigned char *read_whole_file(const char *path, int flags, size_t max_size, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	struct stat status;
	unsigned char *data = NULL;
	size_t done = 0;
	ssize_t got = 1;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &status) == 0) {
		if (!S_ISREG(status.st_mode))
			errno = EINVAL;
		else if ((size_t)status.st_size > max_size)
			errno = EFBIG;
		else
			data = xmalloc((size_t)status.st_size + 1);
	}
	while (data && done < (size_t)status.st_size && got > 0) {
		got = read(fd, data + done, (size_t)status.st_size - done);
		if (got > 0)
			done += (size_t)got;
		else if (got < 0 && errno == EINTR)
			got = 1;
	}
	if (data && done < (size_t)status.st_size) {
		if (got == 0)
			errno = EIO; /* the file shrank while read */
		free(data);
		data = NULL;
	}
	if (data) {
		data[done] = '\0';
		*size = done;
	}
	close(fd);
	return data;
}
