#include "push_request_encode.h"
#include "util.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* Protobuf's wire types. */
enum { WIRE_LENGTH_DELIMITED = 2 };

/* A message being written. */
struct message {
	unsigned char *bytes;
	size_t length, capacity;
};

static void append(struct message *message, const void *bytes, size_t length)
{
	grow_array((void **)&message->bytes, &message->capacity, message->length + length + 1, 1);
	memcpy(message->bytes + message->length, bytes, length);
	message->length += length;
}

static void append_varint(struct message *message, uint64_t value)
{
	unsigned char bytes[10];
	size_t length = 0;

	do {
		bytes[length++] = (unsigned char)((value & 0x7F) | (value > 0x7F ? 0x80 : 0));
		value >>= 7;
	} while (value);
	append(message, bytes, length);
}

/* Field `number` holding `length` bytes (a string, bytes or a message). */
static void append_field(struct message *message, unsigned number, const void *bytes, size_t length)
{
	append_varint(message, (uint64_t)number << 3 | WIRE_LENGTH_DELIMITED);
	append_varint(message, length);
	append(message, bytes, length);
}

/* A LabelPair as field 1 of the series; the name cleaned. */
static void append_label(struct message *series, const char *name, size_t name_length,
			 const char *value)
{
	struct message pair = {0};
	char *clean = xasprintf("%.*s", (int)name_length, name);

	for (char *c = clean; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			*c = '_';
	append_field(&pair, 1, clean, strlen(clean));
	append_field(&pair, 2, value, strlen(value));
	append_field(series, 1, pair.bytes, pair.length);
	free(pair.bytes);
	free(clean);
}

/* A random (version 4) UUID, as text. */
static void random_uuid(char text[37])
{
	unsigned char bytes[16] = {0};

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (unsigned char)rand();
	bytes[6] = (unsigned char)((bytes[6] & 0x0F) | 0x40);
	bytes[8] = (unsigned char)((bytes[8] & 0x3F) | 0x80);
	snprintf(text, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
		 bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14],
		 bytes[15]);
}

unsigned char *push_request_encode(const char *service, const char *const *labels,
				   size_t label_count, const unsigned char *profile,
				   size_t profile_size, size_t *size)
{
	struct message series = {0}, sample = {0}, request = {0};
	char id[37];

	append_label(&series, "__name__", 8, "process_cpu");
	append_label(&series, "service_name", 12, service);
	for (size_t i = 0; i < label_count; i++) {
		const char *equals = strchr(labels[i], '=');

		if (equals)
			append_label(&series, labels[i], (size_t)(equals - labels[i]), equals + 1);
	}
	random_uuid(id);
	append_field(&sample, 1, profile, profile_size);
	append_field(&sample, 2, id, strlen(id));
	append_field(&series, 2, sample.bytes, sample.length);
	append_field(&request, 1, series.bytes, series.length);
	free(sample.bytes);
	free(series.bytes);
	*size = request.length;
	return request.bytes;
}
