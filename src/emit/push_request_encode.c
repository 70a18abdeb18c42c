#include "push_request_encode.h"
#include "protobuf_writer.h"
#include "util.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* A LabelPair as field 1 of the series; the name cleaned. */
static void append_label(struct protobuf_message *series, const char *name, size_t name_length,
			 const char *value)
{
	struct protobuf_message pair = {0};
	char *clean = xasprintf("%.*s", (int)name_length, name);

	for (char *c = clean; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			*c = '_';
	protobuf_string_field(&pair, 1, clean);
	protobuf_string_field(&pair, 2, value);
	protobuf_message_field(series, 1, &pair);
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

unsigned char *push_request_encode(const char *name, const char *service, const char *const *labels,
				   size_t label_count, const unsigned char *profile,
				   size_t profile_size, size_t *size)
{
	struct protobuf_message series = {0}, sample = {0}, request = {0};
	char id[37];

	append_label(&series, "__name__", 8, name);
	append_label(&series, "service_name", 12, service);
	for (size_t i = 0; i < label_count; i++) {
		const char *equals = strchr(labels[i], '=');

		if (equals)
			append_label(&series, labels[i], (size_t)(equals - labels[i]), equals + 1);
	}
	random_uuid(id);
	protobuf_bytes_field(&sample, 1, profile, profile_size);
	protobuf_string_field(&sample, 2, id);
	protobuf_message_field(&series, 2, &sample);
	protobuf_message_field(&request, 1, &series);
	*size = request.length;
	return request.bytes;
}
