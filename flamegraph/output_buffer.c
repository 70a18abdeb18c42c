#include "output_buffer.h"
#include "allocation.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

enum { BUFFER_SIZE = 256 * 1024 };

static const char replacement_character[] = "\xEF\xBF\xBD"; /* U+FFFD */

void output_buffer_init(struct output_buffer *buffer, FILE *out)
{
	*buffer = (struct output_buffer){
	    .data = fg_malloc(BUFFER_SIZE), .capacity = BUFFER_SIZE, .out = out};
}

void output_buffer_flush(struct output_buffer *buffer)
{
	if (buffer->length && !buffer->failed &&
	    fwrite(buffer->data, 1, buffer->length, buffer->out) != buffer->length) {
		buffer->failed = true;
		if (!errno)
			errno = EIO;
	}
	buffer->length = 0;
}

int output_buffer_finish(struct output_buffer *buffer)
{
	output_buffer_flush(buffer);
	if (!buffer->failed && fflush(buffer->out)) {
		buffer->failed = true;
		if (!errno)
			errno = EIO;
	}
	free(buffer->data);
	buffer->data = NULL;
	return buffer->failed ? -1 : 0;
}

void output_bytes(struct output_buffer *buffer, const char *bytes, size_t length)
{
	if (length > buffer->capacity / 2) {
		output_buffer_flush(buffer);
		if (!buffer->failed && fwrite(bytes, 1, length, buffer->out) != length) {
			buffer->failed = true;
			if (!errno)
				errno = EIO;
		}
		return;
	}
	memcpy(output_reserve(buffer, length), bytes, length);
	buffer->length += length;
}

static size_t format_unsigned(char *end, uint64_t value)
{
	char *start = end;

	do {
		*--start = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	return (size_t)(end - start);
}

void output_integer(struct output_buffer *buffer, long long value)
{
	char digits[24];
	uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
	size_t length = format_unsigned(digits + sizeof(digits), magnitude);

	if (value < 0)
		output_char(buffer, '-');
	output_bytes(buffer, digits + sizeof(digits) - length, length);
}

void output_decimal(struct output_buffer *buffer, double value, int decimals)
{
	static const double powers[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
	double scaled;
	uint64_t fixed, whole, fraction, unit;
	char digits[24];
	size_t length;

	if (decimals > 6)
		decimals = 6;
	scaled = fabs(value) * powers[decimals] + 0.5;
	/* Rare: kept exact, not fast; past 2^64 the conversion to an integer
	 * below would be undefined (2e13 with 6 decimals). */
	if (!isfinite(value) || fabs(value) > 1e15 || scaled >= 0x1p64) {
		char text[64];
		int n = snprintf(text, sizeof(text), "%.*g", 17, value);

		output_bytes(buffer, text, (size_t)n);
		return;
	}
	unit = (uint64_t)powers[decimals];
	fixed = (uint64_t)scaled;
	if (value < 0 && fixed)
		output_char(buffer, '-');
	whole = fixed / unit;
	fraction = fixed % unit;
	length = format_unsigned(digits + sizeof(digits), whole);
	output_bytes(buffer, digits + sizeof(digits) - length, length);
	if (!fraction)
		return;
	while (fraction % 10 == 0) {
		fraction /= 10;
		decimals--;
	}
	output_char(buffer, '.');
	length = format_unsigned(digits + sizeof(digits), fraction);
	for (size_t zeros = (size_t)decimals - length; zeros; zeros--)
		output_char(buffer, '0');
	output_bytes(buffer, digits + sizeof(digits) - length, length);
}

void output_count(struct output_buffer *buffer, double value)
{
	char digits[32], *start = digits + sizeof(digits);
	uint64_t whole;
	int group = 0;

	if (value != floor(value) || value < 0 || value >= 1e18) {
		output_decimal(buffer, value, 2);
		return;
	}
	whole = (uint64_t)value;
	do {
		if (group++ == 3) {
			*--start = ',';
			group = 1;
		}
		*--start = (char)('0' + whole % 10);
		whole /= 10;
	} while (whole);
	output_bytes(buffer, start, (size_t)(digits + sizeof(digits) - start));
}

/* Length of the valid UTF-8 sequence XML allows at text[0..length), or 0. */
static size_t valid_utf8_length(const unsigned char *text, size_t length)
{
	uint32_t code;
	size_t needed;

	if (text[0] < 0xC2 || text[0] > 0xF4)
		return 0;
	needed = text[0] < 0xE0 ? 2 : text[0] < 0xF0 ? 3 : 4;
	if (length < needed)
		return 0;
	code = text[0] & (0x7F >> needed);
	for (size_t i = 1; i < needed; i++) {
		if ((text[i] & 0xC0) != 0x80)
			return 0;
		code = code << 6 | (text[i] & 0x3F);
	}
	if ((needed == 3 && code < 0x800) || (needed == 4 && (code < 0x10000 || code > 0x10FFFF)))
		return 0; /* overlong or out of range */
	if ((code >= 0xD800 && code <= 0xDFFF) || code == 0xFFFE || code == 0xFFFF)
		return 0; /* surrogates and non-characters XML rejects */
	return needed;
}

void output_xml_text(struct output_buffer *buffer, const char *text, size_t length)
{
	const unsigned char *bytes = (const unsigned char *)text;
	size_t plain_start = 0, i = 0;

	while (i < length) {
		unsigned char c = bytes[i];
		const char *entity;
		size_t sequence;

		if (c >= 0x20 && c < 0x80 && c != '<' && c != '>' && c != '&' && c != '"' &&
		    c != '\'') {
			i++;
			continue;
		}
		if (c >= 0x80 && (sequence = valid_utf8_length(bytes + i, length - i))) {
			i += sequence;
			continue;
		}
		output_bytes(buffer, text + plain_start, i - plain_start);
		switch (c) {
		case '<':
			entity = "&lt;";
			break;
		case '>':
			entity = "&gt;";
			break;
		case '&':
			entity = "&amp;";
			break;
		case '"':
			entity = "&quot;";
			break;
		case '\'':
			entity = "&apos;";
			break;
		case '\t':
			entity = "\t";
			break;
		default:
			entity = replacement_character;
		}
		output_string(buffer, entity);
		plain_start = ++i;
	}
	output_bytes(buffer, text + plain_start, i - plain_start);
}
