#include "whole_file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

uint8_t *read_whole(const char *path, size_t *size)
{
	FILE *in = fopen(path, "rb");
	uint8_t *data;
	long length;

	assert_non_null(in);
	fseek(in, 0, SEEK_END);
	length = ftell(in);
	rewind(in);
	data = malloc((size_t)length);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)length, in), (size_t)length);
	fclose(in);
	*size = (size_t)length;
	return data;
}

void write_whole(const char *path, const uint8_t *data, size_t size)
{
	FILE *out = fopen(path, "wb");

	assert_non_null(out);
	assert_int_equal(fwrite(data, 1, size, out), size);
	fclose(out);
}
