/* The profiles a period keeps in its spool folder while the receiver
 * takes none: DIR/series-NUMBER.pb.gz, the profile as it would have been
 * pushed, and DIR/series-NUMBER.labels, its series (the service name, its
 * profile's name unless process_cpu, then the labels, a line each). */
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
 * (malloc'd). False, with `why` written, when either cannot be read. */
bool agent_kept_read(const char *labels_path, unsigned char **data, size_t *size,
		     struct agent_labels *labels, char **profile_path, char *why, size_t why_size);

/* Whether `entry` of a period's folder is a kept profile's labels file
 * (for scandir(3)). */
int agent_kept_is_labels_file(const struct dirent *entry);

#endif
