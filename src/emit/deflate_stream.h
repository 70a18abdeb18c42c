/* Deflating a stream of bytes at level 1 with ISA-L's igzip, about ten
 * times zlib's speed at level 1 for a few percent more bytes: perf script
 * text is the largest output, and deflating it was the largest part of a
 * postprocess. Raw deflate (for a zip member, with its CRC-32 kept here) or
 * gzip (for a .gz file). */
#ifndef PROFCPU_DEFLATE_STREAM_H
#define PROFCPU_DEFLATE_STREAM_H

#include <isa-l/igzip_lib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Takes `size` deflated bytes; returns 0, or -1 with errno set. */
typedef int (*deflate_sink)(void *context, const void *bytes, size_t size);

struct deflate_stream {
	struct isal_zstream stream;
	uint8_t *level_buffer;
	deflate_sink sink;
	void *context;
	uint32_t crc;	    /* of the bytes given so far (CRC-32 of zip and gzip) */
	uint64_t size;	    /* how many */
	uint8_t out[65536]; /* deflated bytes on their way to the sink */
};

/* Starts a raw deflate stream, or with `gzip` a gzip file (header and
 * trailer included), whose bytes go to `sink`. */
void deflate_stream_start(struct deflate_stream *deflater, bool gzip, deflate_sink sink,
			  void *context);

/* Deflates `size` bytes. Returns 0, or the sink's -1. */
int deflate_stream_write(struct deflate_stream *deflater, const void *bytes, size_t size);

/* Ends the stream. Returns 0, or the sink's -1. Frees what start made either
 * way. */
int deflate_stream_finish(struct deflate_stream *deflater);

#endif
