/* The profiles a period keeps in its spool folder while a receiver takes
 * none: for Pyroscope, DIR/series-NUMBER.pb.gz, the profile as it would
 * have been pushed, and DIR/series-NUMBER.labels, its series (the service
 * name, its profile's name unless process_cpu, then the labels, a line
 * each); for the OpenTelemetry receiver, DIR/otlp-request.pb, the period's
 * ExportProfilesServiceRequest as it would have been sent (before its
 * gzip). Each receiver's are sent and removed on their own. */
#ifndef PROFCPU_AGENT_KEPT_H
#define PROFCPU_AGENT_KEPT_H

#include "agent_series.h"

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>

/* Keeps profile `number` of the period in `dir` (its `size` bytes of
 * `data`, and `labels`); says why when it cannot (the profile is then
 * dropped). */
void agent_kept_write(const char *dir, size_t number, const unsigned char *data, size_t size,
		      const struct agent_labels *labels);

/* Reads the profile kept with the labels file `labels_path`: its data
 * (malloc'd, `*size` bytes) and labels (to free), and its own path
 * (malloc'd). False, with `why` written (the file that cannot be read and
 * why), when either cannot be read. */
bool agent_kept_read(const char *labels_path, unsigned char **data, size_t *size,
		     struct agent_labels *labels, char **profile_path, char *why, size_t why_size);

/* Whether `entry` of a period's folder is a kept profile's labels file
 * (for scandir(3)). */
int agent_kept_is_labels_file(const struct dirent *entry);

/* Keeps the OTLP request of the period in `dir`; says why when it cannot
 * (the request is then dropped). */
void agent_kept_write_otlp(const char *dir, const unsigned char *data, size_t size);

/* The path of the OTLP request kept in `dir` (malloc'd), whether there is
 * one or not. */
char *agent_kept_otlp_path(const char *dir);

/* Reads the OTLP request kept at `path` (malloc'd, `*size` bytes); NULL,
 * with `why` written, when it cannot. */
unsigned char *agent_kept_read_otlp(const char *path, size_t *size, char *why, size_t why_size);

#endif
