/* zstd is given the records in place (ZSTD_c_stableInBuffer), in a history
 * buffer they are appended to, rather than copying them into a ring buffer
 * of its own: one copy of each record fewer, and the matches are searched in
 * one contiguous window, where zstd's fast search is about a third faster
 * than across the wrap of its ring (docs/BENCHMARKS.md). When the history is
 * full, the frame ends and the next starts at its beginning again. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_stableInBuffer, in libzstd since 1.4.6 */
#include "perf_data_compressor.h"

#include "perf_records.h"
#include "util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* An 8 MiB window (what the decoder holds too) reaches a thread's earlier
 * samples; a 1 MiB hash table finds them as well as a 4 MiB one (within
 * 0.2% on hybrid and off-CPU captures) with fewer cache misses. */
#define WINDOW_LOG 23
#define HASH_LOG   18
/* Twice the window: a frame's records reach back a whole window but for
 * its first half. */
#define HISTORY_SIZE ((size_t)2 << WINDOW_LOG)

struct perf_data_compressor {
	ZSTD_CCtx *stream;
	unsigned char *history; /* the current frame's records */
	size_t used;		/* bytes of the frame in history */
	size_t compressed;	/* of those, the bytes compressed */
};

struct perf_data_compressor *perf_data_compressor_create(int level)
{
	ZSTD_CCtx *stream = ZSTD_createCCtx();
	struct perf_data_compressor *compressor;

	if (!stream)
		return NULL;
	/* A wider window and hash table than level 1's (512 KiB, 2^13) find
	 * what a thread's stack copy shares with its earlier ones (the frames
	 * below the leaf rarely change): half the size of hybrid captures at
	 * about the same speed (docs/BENCHMARKS.md). zstd's and perf's decoders
	 * take windows up to 128 MiB by default. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(stream, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(stream, ZSTD_c_windowLog, WINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(stream, ZSTD_c_hashLog, HASH_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(stream, ZSTD_c_stableInBuffer, 1))) {
		ZSTD_freeCCtx(stream);
		return NULL;
	}
	compressor = xcalloc(1, sizeof(*compressor));
	compressor->stream = stream;
	compressor->history = xmalloc(HISTORY_SIZE);
	return compressor;
}

void perf_data_compressor_free(struct perf_data_compressor *compressor)
{
	if (!compressor)
		return;
	ZSTD_freeCCtx(compressor->stream);
	free(compressor->history);
	free(compressor);
}

size_t perf_data_compressor_pending(const struct perf_data_compressor *compressor)
{
	return compressor->used - compressor->compressed;
}

void perf_data_compressor_add(struct perf_data_compressor *compressor, const void *bytes,
			      size_t size)
{
	memcpy(compressor->history + compressor->used, bytes, size);
	compressor->used += size;
}

size_t perf_data_compressor_compress(struct perf_data_compressor *compressor, void *output)
{
	struct perf_event_header header = {.type = PERF_RECORD_COMPRESSED};
	ZSTD_inBuffer in = {compressor->history, compressor->used, compressor->compressed};
	ZSTD_outBuffer out = {(char *)output + sizeof(header),
			      PERF_DATA_COMPRESSED_RECORD_ROOM - sizeof(header), 0};
	/* The frame ends when the history has no room for another chunk. */
	bool last = HISTORY_SIZE - compressor->used < PERF_DATA_COMPRESSION_CHUNK;
	size_t remaining;

	do {
		remaining = ZSTD_compressStream2(compressor->stream, &out, &in,
						 last ? ZSTD_e_end : ZSTD_e_flush);
		if (ZSTD_isError(remaining))
			return 0;
		/* A full output with more to flush would break the size bound. */
		if (remaining && out.pos == out.size)
			return 0;
	} while (remaining || in.pos < in.size);
	if (last)
		compressor->used = 0;
	compressor->compressed = compressor->used;
	header.size = (uint16_t)(sizeof(header) + out.pos);
	memcpy(output, &header, sizeof(header));
	return header.size;
}
