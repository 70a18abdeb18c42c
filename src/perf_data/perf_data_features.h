/* The feature sections the perf.data writer stores after the data section:
 * the table of sections in feature-bit order, then their bodies. */
#ifndef PROFCPU_PERF_DATA_FEATURES_H
#define PROFCPU_PERF_DATA_FEATURES_H

#include "perf_data.h"
#include "perf_data_format.h"

#include <stddef.h>
#include <stdint.h>

struct perf_data_features {
	uint8_t *bytes; /* table and bodies, to be written at `offset` */
	size_t size;
	uint64_t bitmap[4]; /* for perf_file_header.features */
};

/* Lays out the feature sections for a file whose data section ends at
 * `offset`. Every string in `info` must be set. `compression` is NULL for
 * an uncompressed file. HEADER_CLOCKID is added when attr->use_clockid is
 * set. Free the result with perf_data_features_free(). */
void perf_data_features_build(struct perf_data_features *features, uint64_t offset,
			      const struct perf_event_attr *attr, const struct perf_data_info *info,
			      const struct perf_compressed_description *compression);
void perf_data_features_free(struct perf_data_features *features);

#endif
