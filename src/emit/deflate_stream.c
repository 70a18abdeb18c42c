#include "deflate_stream.h"
#include "util.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <stdlib.h>

/* RFC 1952: deflate, no flags, no time, no extra flags, Unix. */
static const uint8_t gzip_header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

void deflate_stream_start(struct deflate_stream *deflater, bool gzip, deflate_sink sink,
			  void *context)
{
	isal_deflate_init(&deflater->stream);
	deflater->stream.level = 1;
	deflater->stream.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	deflater->level_buffer = xmalloc(ISAL_DEF_LVL1_DEFAULT);
	deflater->stream.level_buf = deflater->level_buffer;
	/* The gzip header and trailer are written here: the CRC-32 and size
	 * cover bytes deflated elsewhere too (deflate_stream_count). */
	deflater->stream.gzip_flag = IGZIP_DEFLATE;
	deflater->gzip = gzip;
	deflater->gzip_header_due = gzip;
	deflater->sink = sink;
	deflater->context = context;
	deflater->crc = 0;
	deflater->size = 0;
}

/* Runs the deflater on what it was given, with `flush`, `last` or not, and
 * hands what it made to the sink. */
static int run(struct deflate_stream *deflater, uint16_t flush, bool last)
{
	struct isal_zstream *stream = &deflater->stream;

	if (deflater->gzip_header_due) {
		deflater->gzip_header_due = false;
		if (deflater->sink(deflater->context, gzip_header, sizeof(gzip_header)) < 0)
			return -1;
	}
	stream->flush = flush;
	stream->end_of_stream = last;
	do {
		stream->next_out = deflater->out;
		stream->avail_out = sizeof(deflater->out);
		if (isal_deflate(stream) != COMP_OK) {
			errno = EINVAL;
			return -1;
		}
		if (stream->avail_out < sizeof(deflater->out) &&
		    deflater->sink(deflater->context, deflater->out,
				   sizeof(deflater->out) - stream->avail_out) < 0)
			return -1;
	} while (stream->avail_in || !stream->avail_out ||
		 (last && stream->internal_state.state != ZSTATE_END));
	return 0;
}

int deflate_stream_write(struct deflate_stream *deflater, const void *bytes, size_t size)
{
	const uint8_t *next = bytes;

	deflate_stream_count(deflater, bytes, size);
	/* avail_in is 32 bits wide. */
	while (size) {
		uint32_t part = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;

		deflater->stream.next_in = (uint8_t *)next;
		deflater->stream.avail_in = part;
		if (run(deflater, NO_FLUSH, false) < 0)
			return -1;
		next += part;
		size -= part;
	}
	return 0;
}

int deflate_stream_flush(struct deflate_stream *deflater)
{
	deflater->stream.avail_in = 0;
	return run(deflater, FULL_FLUSH, false);
}

void deflate_stream_count(struct deflate_stream *deflater, const void *bytes, size_t size)
{
	deflater->crc = crc32_gzip_refl(deflater->crc, bytes, size);
	deflater->size += size;
}

int deflate_stream_finish(struct deflate_stream *deflater)
{
	uint8_t trailer[8];
	int status = deflate_stream_flush(deflater);

	if (status == 0)
		status = run(deflater, NO_FLUSH, true);
	if (status == 0 && deflater->gzip) {
		for (int i = 0; i < 4; i++) {
			trailer[i] = (uint8_t)(deflater->crc >> (8 * i));
			trailer[4 + i] = (uint8_t)(deflater->size >> (8 * i));
		}
		status = deflater->sink(deflater->context, trailer, sizeof(trailer));
	}
	free(deflater->level_buffer);
	deflater->level_buffer = NULL;
	return status;
}
