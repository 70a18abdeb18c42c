/* Outputs, one file each, all read from the one symbolized profile. Each
 * returns 0, or -1 with errno set when the file cannot be written. */
#ifndef PROFCPU_EMIT_H
#define PROFCPU_EMIT_H

#include "profile.h"

#include <stdbool.h>
#include <stdio.h>

/* Folded stacks: "root;...;leaf COUNT", one line per unique stack. */
int emit_folded(const struct folded_profile *folded, FILE *out);

/* The samples in the text layout of `perf script`, as perfcollect asks for
 * it (comm pid/tid [cpu] time: period event:, then one TAB-indented
 * "ADDR SYMBOL (DSO)" line per frame, leaf first, then a blank line). With
 * `source_lines`, each frame's line follows it as `perf script -F +srcline`
 * writes it ("  FILE:LINE"). */
int emit_perf_script(const struct profile *profile, bool source_lines, FILE *out);

/* The interactive flame graph SVG of the folded stacks. */
int emit_flamegraph(const struct folded_profile *folded, const char *title, const char *subtitle,
		    FILE *out);

/* The same with another palette (flamegraph.h; NULL: "dotnet", by kind of
 * code) and unit of the counts (NULL: "samples"). */
int emit_flamegraph_styled(const struct folded_profile *folded, const char *title,
			   const char *subtitle, const char *palette, const char *count_name,
			   FILE *out);

/* pprof's profile.proto, gzip-compressed (profile.pb.gz): samples of each
 * stack and thread, counted and weighted by CPU time, with functions,
 * locations and mappings; the thread and process names and the pid are
 * labels. The capture ended at `end_time_nanos` (Unix time; 0 when
 * unknown), which dates the profile. */
int emit_pprof(const struct profile *profile, int64_t end_time_nanos, FILE *out);

/* The values of a profile of events (runtime_profiles.h), as pprof names
 * them: a count ("contentions"/"count") and, unless weight_type is NULL, a
 * weight the samples' periods hold ("delay"/"nanoseconds"). */
struct pprof_values {
	const char *count_type, *count_unit;
	const char *weight_type, *weight_unit;
	const uint64_t *counts; /* by sample; NULL: each sample counts 1 */
	/* A label of each sample whose value is not 0 (NULL: none): the key
	 * `label_key`, the decimal value label_values[sample]. */
	const char *label_key;
	const uint64_t *label_values;
};

/* The same of a profile of events: its samples' `values`, the count its
 * period type, the profile's length from its first event to its last. */
int emit_pprof_events(const struct profile *profile, const struct pprof_values *values,
		      int64_t end_time_nanos, FILE *out);

/* A part of a profile (some processes'): the indices of its samples (in
 * time order) and of its locations (ascending) in the profile's arrays. */
struct profile_part {
	const uint32_t *samples, *locations;
	size_t sample_count, location_count;
};

/* What a pprof profile covers, as written into it: its start (Unix
 * nanoseconds), its length, and the sampling period (nanoseconds of CPU
 * time for a clock event). */
struct pprof_span {
	int64_t time_nanos, duration_nanos, period;
};

/* The same of `part` alone, in time and memory proportional to the part,
 * not to the whole profile; what it covers in `*span`. */
int emit_pprof_part(const struct profile *profile, const struct profile_part *part,
		    int64_t end_time_nanos, FILE *out, struct pprof_span *span);

/* speedscope's file format (speedscope.json): one sampled profile per
 * thread in time order, each sample weighted by its period, the gaps
 * between samples as idle time, so speedscope's time-order view shows when
 * each thread ran. */
int emit_speedscope(const struct profile *profile, FILE *out);

/* Where emit_hot_lines() reads source text: from each file's path, or
 * under `dir` (NULL: the path alone) by that path or a tail of it. */
struct hot_lines_source {
	const char *dir;
};

#define HOT_LINES_FUNCTIONS 10 /* how many functions the listing shows by default */

/* The hottest source lines, as `perf annotate --stdio` lists them: the
 * `top` functions with the most samples on a known line of their own (self
 * time), each with its lines' share of all samples, and with `source`
 * (NULL: none) the source text around them. */
int emit_hot_lines(const struct profile *profile, size_t top, const struct hot_lines_source *source,
		   FILE *out);

enum archive_format {
	ARCHIVE_TAR_GZ, /* prof.tar.gz */
	ARCHIVE_ZIP,	/* NAME.trace.zip, deflated, as perfcollect writes it */
};

/* A file of the capture folder and the name it gets in an archive (NULL:
 * its own name). */
struct archive_member {
	const char *file, *name;
	/* Kept as it is: stored in a zip, in stored blocks in a tar.gz. For
	 * bytes compressed already (a zstd-compressed perf.data), where
	 * deflating gains nothing and ran at 34 MB/s, and for the zip's
	 * perf.data.txt (outputs.c says why). */
	bool stored;
};

/* A zip emit_archive wrote (`zip_path`, its members under the folder
 * `top`), whose deflated members a tar.gz written after it takes as they
 * are, when a member of the same name holds the same bytes. */
struct deflated_members {
	const char *zip_path, *top;
};

/* An archive of `members` (files inside `dir`) stored under the folder `top`.
 * Files that do not exist are left out. A tar.gz takes what it can from
 * `deflated` (NULL: deflates every member). */
int emit_archive(const char *dir, const struct archive_member *members, size_t member_count,
		 const char *top, enum archive_format format, const char *archive_path,
		 const struct deflated_members *deflated);

#endif
