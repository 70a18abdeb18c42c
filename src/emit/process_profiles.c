#include "process_profiles.h"
#include "emit.h"
#include "id_map.h"
#include "output_file.h"
#include "replay.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* When the capture ended: perf.data is finished last. */
static int64_t end_time_nanos(const char *perf_data)
{
	struct stat status;

	return stat(perf_data, &status) == 0
		   ? (int64_t)status.st_mtim.tv_sec * 1000000000 + status.st_mtim.tv_nsec
		   : 0;
}

/* The processes with samples, in the order their first sample came; not
 * the idle task (pid 0), which runs while the CPU has nothing to do. */
static size_t list_processes(const struct profile *profile, struct process_profile **profiles)
{
	struct id_map pids = {0};
	size_t capacity = 0, count;

	*profiles = NULL;
	for (size_t i = 0; i < profile->sample_count; i++) {
		const struct profile_sample *sample = &profile->samples[i];
		bool added;
		uint32_t index;

		if (sample->pid == 0) /* the idle task, not a process */
			continue;
		index = id_map_get(&pids, sample->pid, 0, &added);

		if (added) {
			grow_array((void **)profiles, &capacity, index + 1, sizeof(**profiles));
			(*profiles)[index] = (struct process_profile){.pid = (pid_t)sample->pid};
			snprintf((*profiles)[index].process_name,
				 sizeof((*profiles)[index].process_name), "%s",
				 sample->process_name ? sample->process_name : "");
		}
		(*profiles)[index].samples++;
	}
	count = pids.count;
	id_map_release(&pids);
	return count;
}

long process_profiles_write(const char *dir, const struct resolver_config *config,
			    struct process_profile **profiles)
{
	struct resolver *resolver = resolver_new(config);
	char *perf_data = xasprintf("%s/perf.data", dir);
	struct profile profile;
	long count = -1;

	*profiles = NULL;
	profile_init(&profile);
	if (replay_capture(perf_data, resolver, &profile) == 0) {
		int64_t end = end_time_nanos(perf_data);

		count = (long)list_processes(&profile, profiles);
		for (long i = 0; i < count; i++) {
			struct process_profile *process = &(*profiles)[i];
			struct output_file file;

			process->path = xasprintf("%s/%d.pb.gz", dir, (int)process->pid);
			if (output_file_open(&file, process->path) == 0) {
				bool failed = emit_pprof_process(&profile, (uint32_t)process->pid,
								 end, file.stream) < 0;

				if (output_file_commit(&file, failed) == 0)
					continue;
			}
			report_error("cannot write %s: %s", process->path, strerror(errno));
			free(process->path);
			process->path = NULL;
		}
	}
	profile_release(&profile);
	resolver_free(resolver);
	free(perf_data);
	return count;
}

void process_profiles_free(struct process_profile *profiles, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(profiles[i].path);
	free(profiles);
}
