#include "postprocess.h"
#include "outputs.h"
#include "replay.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int postprocess_capture(const char *dir, const struct resolver_config *config)
{
	struct resolver *resolver = resolver_new(config);
	char *perf_data = xasprintf("%s/perf.data", dir);
	struct profile profile;
	int status;

	profile_init(&profile);
	status = replay_capture(perf_data, resolver, &profile);
	if (status == 0) {
		if (config->live_pid)
			copy_live_perfmap(dir, resolver, config->live_pid);
		status = outputs_write(dir, &profile);
		if (profile.cut_stacks * 100 > profile.sample_count)
			report_warning(
			    "%llu of %zu stacks reached the kernel's limit of %u frames and "
			    "lost their roots: raise it on the host with sysctl -w "
			    "kernel.perf_event_max_stack=1024 before collecting",
			    (unsigned long long)profile.cut_stacks, profile.sample_count,
			    profile.max_stack_depth);
		if (profile.sample_count == 0)
			report_warning("no samples: the target used no CPU while it was sampled; "
				       "no flame graph was drawn");
		else
			printf("profcpu: %zu samples, %zu unique stacks; flame graph: "
			       "%s/flamegraph.svg\n",
			       profile.sample_count, profile.stack_count, dir);
	}
	profile_release(&profile);
	resolver_free(resolver);
	free(perf_data);
	return status;
}
