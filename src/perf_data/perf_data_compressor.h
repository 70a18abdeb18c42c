/* zstd compression of perf.data records into PERF_RECORD_COMPRESSED
 * records, in zstd frames that follow one another across the file as `perf
 * record -z` writes them (perf's reader and profcpu's decode them as one
 * stream). */
#ifndef PROFCPU_PERF_DATA_COMPRESSOR_H
#define PROFCPU_PERF_DATA_COMPRESSOR_H

#include <stddef.h>

/* The most record bytes compressed at once. Small enough that even
 * incompressible bytes fit in one PERF_RECORD_COMPRESSED (whose size is a
 * u16), so each such record decompresses on its own to at most this many
 * bytes: the decompression buffer size stated in HEADER_COMPRESSED. */
#define PERF_DATA_COMPRESSION_CHUNK 64000

/* Room perf_data_compressor_compress() needs at `output`. */
#define PERF_DATA_COMPRESSED_RECORD_ROOM 65535

struct perf_data_compressor;

/* NULL if zstd cannot set up a stream. */
struct perf_data_compressor *perf_data_compressor_create(int level);
void perf_data_compressor_free(struct perf_data_compressor *compressor);

/* How many bytes were added since the last perf_data_compressor_compress():
 * at most PERF_DATA_COMPRESSION_CHUNK. */
size_t perf_data_compressor_pending(const struct perf_data_compressor *compressor);

/* Appends `size` bytes of records to what the next compression takes; the
 * pending bytes and `size` together at most PERF_DATA_COMPRESSION_CHUNK. */
void perf_data_compressor_add(struct perf_data_compressor *compressor, const void *bytes,
			      size_t size);

/* Compresses the pending bytes (at least one), flushed so that they can be
 * decompressed without what follows, into one PERF_RECORD_COMPRESSED at
 * `output`. Returns that record's size, or 0 if zstd failed. */
size_t perf_data_compressor_compress(struct perf_data_compressor *compressor, void *output);

#endif
