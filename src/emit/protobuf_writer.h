/* Protocol Buffers' wire format, written by hand for the messages profcpu
 * sends whole (Pyroscope's PushRequest, OTLP's profiles): a message is a
 * growing byte buffer; a nested message is written into its own buffer,
 * then appended as a length-delimited field. */
#ifndef PROFCPU_PROTOBUF_WRITER_H
#define PROFCPU_PROTOBUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct protobuf_message {
	unsigned char *bytes; /* malloc'd */
	size_t length, capacity;
};

/* Field `number` as a varint (int32, int64, uint64, bool, enum; a
 * negative int32 or int64 takes ten bytes, as protobuf writes it). */
void protobuf_varint_field(struct protobuf_message *message, unsigned number, uint64_t value);

/* Field `number` as fixed64. */
void protobuf_fixed64_field(struct protobuf_message *message, unsigned number, uint64_t value);

/* Field `number` holding `length` bytes: a string, bytes, or a message. */
void protobuf_bytes_field(struct protobuf_message *message, unsigned number, const void *bytes,
			  size_t length);

/* Field `number` holding the text `text`. */
void protobuf_string_field(struct protobuf_message *message, unsigned number, const char *text);

/* Field `number` holding `inner` (a nested message), which is then freed. */
void protobuf_message_field(struct protobuf_message *message, unsigned number,
			    struct protobuf_message *inner);

/* Field `number`: `count` integers packed (a repeated int32, int64). */
void protobuf_packed_field(struct protobuf_message *message, unsigned number, const int64_t *values,
			   size_t count);

/* Appends the fields written apart in `fields`, which are then freed. */
void protobuf_append(struct protobuf_message *message, struct protobuf_message *fields);

void protobuf_message_free(struct protobuf_message *message);

#endif
