/* Buffered output for the writers: bytes collect in a large block that is
 * written with one fwrite when full, and numbers and XML text are formatted
 * by hand (printf per frame would dominate the time on big graphs). */
#ifndef PROFCPU_OUTPUT_BUFFER_H
#define PROFCPU_OUTPUT_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct output_buffer {
	char *data;
	size_t length, capacity;
	FILE *out;
	bool failed; /* a write failed; errno tells why */
};

void output_buffer_init(struct output_buffer *buffer, FILE *out);

/* Writes what is buffered and frees the buffer. Returns 0, or -1 with
 * errno set when any write failed. */
int output_buffer_finish(struct output_buffer *buffer);

/* Writes out what is buffered (when room for `needed` more bytes lacks). */
void output_buffer_flush(struct output_buffer *buffer);

static inline char *output_reserve(struct output_buffer *buffer, size_t needed)
{
	if (buffer->length + needed > buffer->capacity)
		output_buffer_flush(buffer);
	return buffer->data + buffer->length;
}

void output_bytes(struct output_buffer *buffer, const char *bytes, size_t length);

static inline void output_string(struct output_buffer *buffer, const char *text)
{
	output_bytes(buffer, text, strlen(text));
}

static inline void output_char(struct output_buffer *buffer, char c)
{
	*output_reserve(buffer, 1) = c;
	buffer->length++;
}

/* A whole number, e.g. 1234. */
void output_integer(struct output_buffer *buffer, long long value);

/* `value` rounded to `decimals` places, trailing zeros dropped ("12.5"). */
void output_decimal(struct output_buffer *buffer, double value, int decimals);

/* A sample count for people: "1,234,567", or "12.5" when fractional. */
void output_count(struct output_buffer *buffer, double value);

/* Text made safe for XML content and attribute values: <>&"' become
 * entities, and bytes that are not valid UTF-8 or are control characters
 * XML forbids become U+FFFD, so any frame name gives well-formed XML. */
void output_xml_text(struct output_buffer *buffer, const char *text, size_t length);

#endif
