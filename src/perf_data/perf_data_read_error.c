/* The reader's one way to report why a file cannot be read; every reader
 * file uses it, so it lives apart from all of them. */
#include "perf_data_reader_internal.h"

#include <stdarg.h>
#include <stdio.h>

int perf_data_set_error(char *error, size_t error_size, const char *format, ...)
{
	va_list arguments;

	if (error && error_size) {
		va_start(arguments, format);
		vsnprintf(error, error_size, format, arguments);
		va_end(arguments);
	}
	return -1;
}
