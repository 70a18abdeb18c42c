/* Walking the data section, with PERF_RECORD_COMPRESSED records expanded
 * through one zstd stream that runs across all of them. */
#include "perf_data_reader_internal.h"

#include "perf_data_format.h"
#include "util.h"

#include <string.h>

/* Room for decompressed records. A partial record left at the end is
 * shorter than PERF_RECORD_MAX_SIZE, so each step has room to go on. */
#define DECOMPRESSED_CAPACITY (256 * 1024)

typedef int (*record_visitor)(const struct perf_event_header *record, void *context);

/* Calls `visit` with the record at `bytes`, copied first if it is not
 * 8-aligned (records after a compressed one often are not). */
static int visit_record(struct perf_data_reader *reader, const uint8_t *bytes, size_t size,
			record_visitor visit, void *context)
{
	if ((uintptr_t)bytes % sizeof(uint64_t)) {
		if (!reader->aligned_record)
			reader->aligned_record = xmalloc(PERF_RECORD_MAX_SIZE + 1);
		memcpy(reader->aligned_record, bytes, size);
		bytes = (const uint8_t *)reader->aligned_record;
	}
	return visit((const struct perf_event_header *)bytes, context);
}

/* Visits the whole records at the start of the decompressed bytes and
 * keeps the partial one that may follow. */
static int visit_decompressed(struct perf_data_reader *reader, record_visitor visit, void *context,
			      char *error, size_t error_size)
{
	size_t position = 0;
	struct perf_event_header header;
	int result = 0;

	while (reader->decompressed_size - position >= sizeof(header)) {
		memcpy(&header, reader->decompressed + position, sizeof(header));
		if (header.size < sizeof(header) || header.type == PERF_RECORD_COMPRESSED) {
			result = perf_data_set_error(error, error_size,
						     "malformed record inside compressed data");
			break;
		}
		if (header.size > reader->decompressed_size - position)
			break;
		result = visit_record(reader, reader->decompressed + position, header.size, visit,
				      context);
		position += header.size;
		if (result)
			break;
	}
	memmove(reader->decompressed, reader->decompressed + position,
		reader->decompressed_size - position);
	reader->decompressed_size -= position;
	return result;
}

static int expand_compressed(struct perf_data_reader *reader, const uint8_t *payload, size_t size,
			     record_visitor visit, void *context, char *error, size_t error_size)
{
	ZSTD_inBuffer input = {payload, size, 0};
	ZSTD_outBuffer output;

	do {
		size_t consumed = input.pos, status;
		int result;

		output = (ZSTD_outBuffer){reader->decompressed + reader->decompressed_size,
					  DECOMPRESSED_CAPACITY - reader->decompressed_size, 0};
		status = ZSTD_decompressStream(reader->decompressor, &output, &input);
		if (ZSTD_isError(status))
			return perf_data_set_error(error, error_size,
						   "corrupt compressed perf.data: %s",
						   ZSTD_getErrorName(status));
		if (!output.pos && input.pos == consumed)
			break; /* zstd needs input this record does not hold */
		reader->decompressed_size += output.pos;
		result = visit_decompressed(reader, visit, context, error, error_size);
		if (result)
			return result;
	} while (input.pos < input.size || output.pos == output.size);
	return 0;
}

static void start_decompression(struct perf_data_reader *reader)
{
	if (!reader->decompressor) {
		reader->decompressor = ZSTD_createDCtx();
		if (!reader->decompressor)
			die("out of memory (zstd)");
		reader->decompressed = xmalloc(DECOMPRESSED_CAPACITY);
	}
	ZSTD_DCtx_reset(reader->decompressor, ZSTD_reset_session_only);
	reader->decompressed_size = 0;
}

int perf_data_reader_for_each(struct perf_data_reader *reader,
			      int (*visit)(const struct perf_event_header *record, void *context),
			      void *context, char *error, size_t error_size)
{
	const uint8_t *data = reader->file + reader->data_offset;
	uint64_t position = 0;
	struct perf_event_header header;
	int result = 0;

	start_decompression(reader);
	while (!result && position < reader->data_size) {
		uint64_t left = reader->data_size - position;

		if (left >= sizeof(header))
			memcpy(&header, data + position, sizeof(header));
		if (left < sizeof(header) || header.size > left) {
			/* A recording that never ended may stop mid-record. */
			if (reader->data_runs_to_end)
				break;
			return perf_data_set_error(
			    error, error_size,
			    "perf.data is truncated: record at offset %llu "
			    "runs past the end of the data",
			    (unsigned long long)(reader->data_offset + position));
		}
		if (header.size < sizeof(header))
			return perf_data_set_error(
			    error, error_size, "bad record size %u at offset %llu", header.size,
			    (unsigned long long)(reader->data_offset + position));
		reader->saw_compressed |= header.type == PERF_RECORD_COMPRESSED;
		if (header.type == PERF_RECORD_COMPRESSED)
			result = expand_compressed(reader, data + position + sizeof(header),
						   header.size - sizeof(header), visit, context,
						   error, error_size);
		else
			result = visit_record(reader, data + position, header.size, visit, context);
		position += header.size;
	}
	if (!result && reader->decompressed_size && !reader->data_runs_to_end)
		return perf_data_set_error(error, error_size,
					   "perf.data is truncated: compressed data ends inside a "
					   "record");
	return result;
}

bool perf_data_reader_saw_compressed(const struct perf_data_reader *reader)
{
	return reader->saw_compressed;
}
