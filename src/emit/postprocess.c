#include "postprocess.h"
#include "output_file.h"
#include "outputs.h"
#include "replay.h"
#include "target_file.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most of a target's file a capture keeps: the copies go into the
 * folder and into both archives, and the target decides how big its files
 * are. */
#define COPY_LIMIT (64ULL << 20)

/* The addresses of the sampled JIT code of `pid`. */
static size_t sampled_jit_addresses(const struct profile *profile, pid_t pid, uint64_t **addresses)
{
	size_t count = 0;

	*addresses = xmalloc(profile->location_count * sizeof(**addresses));
	for (size_t i = 0; i < profile->location_count; i++)
		if (profile->locations[i].pid == (uint32_t)pid &&
		    profile->locations[i].kind == FRAME_JIT)
			(*addresses)[count++] = profile->locations[i].address;
	return count;
}

/* Writes the copy: the whole map, or when it is over COPY_LIMIT the lines
 * that name sampled code (all a later postprocess needs). */
static int write_perfmap_copy(struct perfmap *perfmap, const struct profile *profile, pid_t pid,
			      FILE *out)
{
	uint64_t *addresses;
	size_t count, kept;

	if (perfmap_text_size(perfmap) <= COPY_LIMIT)
		return perfmap_write_copy(perfmap, out);
	count = sampled_jit_addresses(profile, pid, &addresses);
	kept = perfmap_write_entries_holding(perfmap, addresses, count, out);
	free(addresses);
	report_warning("the perf map of pid %d holds %zu MiB, over the %llu MiB a capture keeps: "
		       "its copy holds only the %zu of %zu entries that name sampled code",
		       (int)pid, perfmap_text_size(perfmap) >> 20, COPY_LIMIT >> 20, kept,
		       perfmap_entry_count(perfmap));
	return ferror(out) ? -1 : 0;
}

static void copy_live_perfmap(const char *dir, struct resolver *resolver,
			      const struct profile *profile, pid_t pid)
{
	struct perfmap *perfmap = resolver_perfmap(resolver, pid);
	const struct target_file_budget *budget;
	struct output_file out;
	char *path, why[96];

	if (!perfmap)
		return;
	path = xasprintf("%s/perf-%d.map", dir, (int)pid);
	if (output_file_open(&out, path) < 0 ||
	    output_file_commit(&out, write_perfmap_copy(perfmap, profile, pid, out.stream) < 0) < 0)
		report_error("cannot write %s: %s", path, strerror(errno));
	if (perfmap_malformed_count(perfmap))
		report_warning("skipped %zu malformed lines in the perf map of pid %d",
			       perfmap_malformed_count(perfmap), (int)pid);
	if (perfmap_long_line_count(perfmap))
		report_warning("skipped %zu lines longer than %d KiB in the perf map of pid %d",
			       perfmap_long_line_count(perfmap), PERFMAP_MAX_LINE >> 10, (int)pid);
	budget = perfmap_read_budget(perfmap);
	if (budget->stopped_by)
		report_warning("the perf map of pid %d: %s; later JIT code is not named", (int)pid,
			       target_file_describe_budget(budget, why, sizeof(why)));
	free(path);
}

static void write_chunk(const char *bytes, size_t length, void *out)
{
	fwrite(bytes, 1, length, out);
}

/* Copies the target's /tmp/NAME (NAME made with its own pid) into
 * DIR/COPY_NAME, read through its root as the perf map is. A missing file
 * is not an error: not every runtime writes it. One over COPY_LIMIT, or not
 * a regular file, is left out with a warning. */
static void copy_live_file(const char *dir, const struct resolver_config *config, const char *name,
			   const char *copy_name)
{
	char *source = xasprintf("/tmp/%s", name), *path = xasprintf("%s/%s", dir, copy_name);
	struct target_file_budget budget = {.max_bytes = COPY_LIMIT + 1, .max_seconds = 10};
	int in = target_file_open(config->live_root_fd, source, 0);
	struct output_file out;
	struct stat status;
	bool failed;

	if (in < 0 && errno == EINVAL)
		report_warning("%s of pid %d is not a regular file: not copied", source,
			       (int)config->live_pid);
	if (in < 0)
		goto done;
	if (fstat(in, &status) == 0 && (uint64_t)status.st_size > COPY_LIMIT) {
		report_warning("%s of pid %d not copied: it holds %llu MiB, over the %llu MiB a "
			       "capture keeps (it would fill the capture folder and both archives)",
			       source, (int)config->live_pid,
			       (unsigned long long)status.st_size >> 20, COPY_LIMIT >> 20);
		goto done;
	}
	if (output_file_open(&out, path) < 0) {
		report_error("cannot write %s: %s", path, strerror(errno));
		goto done;
	}
	failed = target_file_read(in, &budget, write_chunk, out.stream) < 0;
	if (budget.stopped_by) {
		char why[96];

		report_warning("%s of pid %d not copied: %s (it would fill the capture folder "
			       "and both archives)",
			       source, (int)config->live_pid,
			       target_file_describe_budget(&budget, why, sizeof(why)));
		errno = EFBIG;
		output_file_commit(&out, true);
	} else if (output_file_commit(&out, failed || ferror(out.stream)) < 0) {
		report_error("cannot copy %s of pid %d to %s: %s", source, (int)config->live_pid,
			     path, strerror(errno));
	}
done:
	if (in >= 0)
		close(in);
	free(source);
	free(path);
}

/* The .NET runtime's jitdump (DOTNET_PerfMapEnabled=1 or 2) and, up to
 * .NET 8, its perfinfo map: perfcollect ships both in the zip. */
static void copy_live_runtime_files(const char *dir, const struct resolver_config *config)
{
	static const char *const patterns[] = {"jit-%d.dump", "perfinfo-%d.map"};

	if (config->live_root_fd < 0)
		return;
	for (size_t i = 0; i < sizeof(patterns) / sizeof(*patterns); i++) {
		char name[64], copy_name[64];

		snprintf(name, sizeof(name), patterns[i], (int)config->live_namespace_pid);
		snprintf(copy_name, sizeof(copy_name), patterns[i], (int)config->live_pid);
		copy_live_file(dir, config, name, copy_name);
	}
}

int postprocess_capture(const char *dir, const struct resolver_config *config,
			const struct trace_zip *zip)
{
	struct resolver *resolver = resolver_new(config);
	char *perf_data = xasprintf("%s/perf.data", dir);
	struct profile profile;
	int status;

	profile_init(&profile);
	status = replay_capture(perf_data, resolver, &profile);
	if (status == 0) {
		if (config->live_pid) {
			copy_live_perfmap(dir, resolver, &profile, config->live_pid);
			copy_live_runtime_files(dir, config);
		}
		/* Before the outputs: the log in the archives says it too. */
		if (profile.cut_stacks * 100 > profile.sample_count)
			report_warning(
			    "%llu of %zu stacks reached the kernel's limit of %u frames and "
			    "lost their roots: raise it on the host with sysctl -w "
			    "kernel.perf_event_max_stack=1024 before collecting",
			    (unsigned long long)profile.cut_stacks, profile.sample_count,
			    profile.max_stack_depth);
		status = outputs_write(dir, &profile, zip);
		if (profile.sample_count == 0)
			report_warning("no samples: the target used no CPU while it was sampled; "
				       "no flame graph was drawn");
		else
			printf("profcpu: %zu samples, %zu unique stacks\n", profile.sample_count,
			       profile.stack_count);
	}
	profile_release(&profile);
	resolver_free(resolver);
	free(perf_data);
	return status;
}
