#include "perf_data_compressor.h"

#include "perf_records.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* An 8 MiB window (what the decoder holds too) reaches a thread's earlier
 * samples; a 4 MiB hash table finds them. */
#define WINDOW_LOG 23
#define HASH_LOG   20

struct perf_data_compressor {
	ZSTD_CCtx *stream;
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
	    !(compressor = malloc(sizeof(*compressor)))) {
		ZSTD_freeCCtx(stream);
		return NULL;
	}
	compressor->stream = stream;
	return compressor;
}

void perf_data_compressor_free(struct perf_data_compressor *compressor)
{
	if (!compressor)
		return;
	ZSTD_freeCCtx(compressor->stream);
	free(compressor);
}

size_t perf_data_compressor_compress(struct perf_data_compressor *compressor, const void *input,
				     size_t size, void *output)
{
	struct perf_event_header header = {.type = PERF_RECORD_COMPRESSED};
	ZSTD_inBuffer in = {input, size, 0};
	ZSTD_outBuffer out = {(char *)output + sizeof(header),
			      PERF_DATA_COMPRESSED_RECORD_ROOM - sizeof(header), 0};
	size_t remaining;

	do {
		remaining = ZSTD_compressStream2(compressor->stream, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(remaining))
			return 0;
		/* A full output with more to flush would break the size bound. */
		if (remaining && out.pos == out.size)
			return 0;
	} while (remaining || in.pos < in.size);
	header.size = (uint16_t)(sizeof(header) + out.pos);
	memcpy(output, &header, sizeof(header));
	return header.size;
}
