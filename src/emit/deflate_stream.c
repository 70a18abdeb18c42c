#include "deflate_stream.h"
#include "util.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <stdlib.h>

void deflate_stream_start(struct deflate_stream *deflater, bool gzip, deflate_sink sink,
			  void *context)
{
	isal_deflate_init(&deflater->stream);
	deflater->stream.level = 1;
	deflater->stream.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	deflater->level_buffer = xmalloc(ISAL_DEF_LVL1_DEFAULT);
	deflater->stream.level_buf = deflater->level_buffer;
	deflater->stream.gzip_flag = gzip ? IGZIP_GZIP : IGZIP_DEFLATE;
	deflater->sink = sink;
	deflater->context = context;
	deflater->crc = 0;
	deflater->size = 0;
}

/* Runs the deflater on what it was given, `last` or not, and hands what it
 * made to the sink. */
static int run(struct deflate_stream *deflater, bool last)
{
	struct isal_zstream *stream = &deflater->stream;

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

	deflater->crc = crc32_gzip_refl(deflater->crc, next, size);
	deflater->size += size;
	/* avail_in is 32 bits wide. */
	while (size) {
		uint32_t part = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;

		deflater->stream.next_in = (uint8_t *)next;
		deflater->stream.avail_in = part;
		if (run(deflater, false) < 0)
			return -1;
		next += part;
		size -= part;
	}
	return 0;
}

int deflate_stream_finish(struct deflate_stream *deflater)
{
	int status;

	deflater->stream.avail_in = 0;
	status = run(deflater, true);
	free(deflater->level_buffer);
	deflater->level_buffer = NULL;
	return status;
}
