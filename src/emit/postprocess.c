#include "postprocess.h"
#include "outputs.h"
#include "replay.h"
#include "target_root.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void copy_live_perfmap(const char *dir, struct resolver *resolver, pid_t pid)
{
	struct perfmap *perfmap = resolver_perfmap(resolver, pid);
	char *path;
	FILE *out;

	if (!perfmap)
		return;
	path = xasprintf("%s/perf-%d.map", dir, (int)pid);
	out = fopen(path, "we");
	if (!out || perfmap_write_copy(perfmap, out) < 0 || fclose(out) != 0)
		report_error("cannot write %s: %s", path, strerror(errno));
	if (perfmap_malformed_count(perfmap))
		report_warning("skipped %zu malformed lines in the perf map of pid %d",
			       perfmap_malformed_count(perfmap), (int)pid);
	free(path);
}

/* Copies the target's /tmp/NAME (NAME made with its own pid) into
 * DIR/COPY_NAME, read through its root as the perf map is. A missing file
 * is not an error: not every runtime writes it. */
static void copy_live_file(const char *dir, const struct resolver_config *config, const char *name,
			   const char *copy_name)
{
	char *source = xasprintf("/tmp/%s", name), *path = xasprintf("%s/%s", dir, copy_name);
	int in = target_root_openat(config->live_root_fd, source, O_RDONLY | O_NOFOLLOW);
	int out = in < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buffer[65536];
	ssize_t length = 0;

	while (out >= 0 && (length = read(in, buffer, sizeof(buffer))) > 0)
		if (write(out, buffer, (size_t)length) != length) {
			length = -1;
			break;
		}
	if (in >= 0 && (out < 0 || length < 0))
		report_error("cannot copy %s of pid %d to %s: %s", source, (int)config->live_pid,
			     path, strerror(errno));
	if (out >= 0)
		close(out);
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

/* The summary line, and the same in the log: how many stacks are whole. */
static void report_stack_completeness(const struct profile *profile, FILE *log)
{
	double rooted = 100.0 * (double)profile->rooted_stacks / (double)profile->sample_count;

	printf("profcpu: %zu samples, %zu unique stacks, %.1f%% reach a thread root\n",
	       profile->sample_count, profile->stack_count, rooted);
	if (log)
		fprintf(log,
			"stacks: %llu of %zu samples (%.1f%%) reach a thread root (start_thread, "
			"__libc_start_call_main, _start, clone3)\n",
			(unsigned long long)profile->rooted_stacks, profile->sample_count, rooted);
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
			copy_live_perfmap(dir, resolver, config->live_pid);
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
			report_stack_completeness(&profile, config->native.log);
	}
	profile_release(&profile);
	resolver_free(resolver);
	free(perf_data);
	return status;
}
