#include "protobuf_writer.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Protobuf's wire types. */
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LENGTH_DELIMITED = 2 };

static void append(struct protobuf_message *message, const void *bytes, size_t length)
{
	grow_array((void **)&message->bytes, &message->capacity, message->length + length + 1, 1);
	if (length)
		memcpy(message->bytes + message->length, bytes, length);
	message->length += length;
}

static void append_varint(struct protobuf_message *message, uint64_t value)
{
	unsigned char bytes[10];
	size_t length = 0;

	do {
		bytes[length++] = (unsigned char)((value & 0x7F) | (value > 0x7F ? 0x80 : 0));
		value >>= 7;
	} while (value);
	append(message, bytes, length);
}

static void append_key(struct protobuf_message *message, unsigned number, unsigned wire_type)
{
	append_varint(message, (uint64_t)number << 3 | wire_type);
}

void protobuf_varint_field(struct protobuf_message *message, unsigned number, uint64_t value)
{
	append_key(message, number, WIRE_VARINT);
	append_varint(message, value);
}

void protobuf_fixed64_field(struct protobuf_message *message, unsigned number, uint64_t value)
{
	unsigned char bytes[8];

	for (size_t i = 0; i < 8; i++)
		bytes[i] = (unsigned char)(value >> (8 * i));
	append_key(message, number, WIRE_FIXED64);
	append(message, bytes, sizeof(bytes));
}

void protobuf_bytes_field(struct protobuf_message *message, unsigned number, const void *bytes,
			  size_t length)
{
	append_key(message, number, WIRE_LENGTH_DELIMITED);
	append_varint(message, length);
	append(message, bytes, length);
}

void protobuf_string_field(struct protobuf_message *message, unsigned number, const char *text)
{
	protobuf_bytes_field(message, number, text, strlen(text));
}

void protobuf_message_field(struct protobuf_message *message, unsigned number,
			    struct protobuf_message *inner)
{
	protobuf_bytes_field(message, number, inner->bytes, inner->length);
	protobuf_message_free(inner);
}

void protobuf_packed_field(struct protobuf_message *message, unsigned number, const int64_t *values,
			   size_t count)
{
	struct protobuf_message packed = {0};

	for (size_t i = 0; i < count; i++)
		append_varint(&packed, (uint64_t)values[i]);
	protobuf_message_field(message, number, &packed);
}

void protobuf_append(struct protobuf_message *message, struct protobuf_message *fields)
{
	append(message, fields->bytes, fields->length);
	protobuf_message_free(fields);
}

void protobuf_message_free(struct protobuf_message *message)
{
	free(message->bytes);
	*message = (struct protobuf_message){0};
}
