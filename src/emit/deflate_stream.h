/* Deflating a stream of bytes at level 1 with ISA-L's igzip, about ten
 * times zlib's speed at level 1 for a few percent more bytes: perf script
 * text is the largest output, and deflating it was the largest part of a
 * postprocess. Raw deflate (for a zip member, with its CRC-32 kept here) or
 * gzip (for a .gz file).
 *
 * Every stream ends with a full flush before its last, empty block
 * (DEFLATE_STREAM_END): what comes before that block is byte-aligned and
 * refers to nothing outside itself, so a zip member's deflated bytes can be
 * put as they are into another stream, at one of its own full flushes
 * (deflate_stream_flush), instead of deflating the same file twice. */
#ifndef PROFCPU_DEFLATE_STREAM_H
#define PROFCPU_DEFLATE_STREAM_H

#include <isa-l/igzip_lib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The last block of every stream: a final, empty block with fixed codes. */
#define DEFLATE_STREAM_END	"\x03\x00"
#define DEFLATE_STREAM_END_SIZE 2
/* What a full flush ends with: an empty stored block. */
#define DEFLATE_STREAM_FLUSH	  "\x00\x00\xff\xff"
#define DEFLATE_STREAM_FLUSH_SIZE 4

/* Takes `size` deflated bytes; returns 0, or -1 with errno set. */
typedef int (*deflate_sink)(void *context, const void *bytes, size_t size);

struct deflate_stream {
	struct isal_zstream stream;
	uint8_t *level_buffer;
	bool gzip, gzip_header_due;
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

/* Hands the sink all that was given so far, up to a byte boundary, and
 * starts afresh: nothing deflated after refers to what came before.
 * Returns 0, or the sink's -1. */
int deflate_stream_flush(struct deflate_stream *deflater);

/* Counts in the CRC-32 and size `size` bytes that were deflated elsewhere,
 * whose deflated bytes the caller gave the sink after a flush. */
void deflate_stream_count(struct deflate_stream *deflater, const void *bytes, size_t size);

/* Ends the stream. Returns 0, or the sink's -1. Frees what start made either
 * way. */
int deflate_stream_finish(struct deflate_stream *deflater);

#endif
