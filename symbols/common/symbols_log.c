#include "symbols_log.h"

#include <stdarg.h>

void symbols_log(FILE *log, const char *format, ...)
{
	va_list arguments;

	if (!log)
		return;
	fputs("profcpu: symbols: ", log);
	va_start(arguments, format);
	vfprintf(log, format, arguments);
	va_end(arguments);
	fputc('\n', log);
	fflush(log);
}
