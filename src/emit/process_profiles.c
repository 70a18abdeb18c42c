#include "process_profiles.h"
#include "emit.h"
#include "id_map.h"
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

/* A process's samples and locations, grown as they are found. */
struct process_part {
	uint32_t *samples, *locations;
	size_t sample_count, sample_capacity, location_count, location_capacity;
};

static void append_index(uint32_t **indices, size_t *count, size_t *capacity, size_t index)
{
	grow_array((void **)indices, capacity, *count + 1, sizeof(**indices));
	(*indices)[(*count)++] = (uint32_t)index;
}

/* Whether a fork gave `process`'s pid to another process after it. */
static bool forked_later(const struct profile *profile, const struct process_profile *process)
{
	for (size_t i = 0; i < profile->forks.count; i++)
		if (profile->forks.keys[i].first == (uint64_t)process->pid &&
		    profile->forks.keys[i].second > process->generation)
			return true;
	return false;
}

/* The processes (pid and generation) with samples, in the order their
 * first sample came, each with its part of the profile; not the idle task (pid 0), which runs
 * while the CPU has nothing to do. One pass over the samples and one over
 * the locations, whatever the number of processes. */
static size_t list_processes(const struct profile *profile, struct process_profile **profiles,
			     struct process_part **parts)
{
	struct id_map processes = {0}; /* by (pid, generation) */
	size_t capacity = 0, part_capacity = 0, count;

	*profiles = NULL;
	*parts = NULL;
	for (size_t i = 0; i < profile->sample_count; i++) {
		const struct profile_sample *sample = &profile->samples[i];
		struct process_part *part;
		bool added;
		uint32_t index;

		if (sample->pid == 0) /* the idle task, not a process */
			continue;
		index = id_map_get(&processes, sample->pid, sample->generation, &added);
		if (added) {
			grow_array((void **)profiles, &capacity, index + 1, sizeof(**profiles));
			grow_array((void **)parts, &part_capacity, index + 1, sizeof(**parts));
			(*profiles)[index] = (struct process_profile){
			    .pid = (pid_t)sample->pid, .generation = sample->generation};
			(*parts)[index] = (struct process_part){0};
			snprintf((*profiles)[index].process_name,
				 sizeof((*profiles)[index].process_name), "%s",
				 sample->process_name ? sample->process_name : "");
		}
		(*profiles)[index].samples++;
		part = &(*parts)[index];
		append_index(&part->samples, &part->sample_count, &part->sample_capacity, i);
	}
	count = processes.count;
	for (size_t i = 0; i < profile->location_count; i++) {
		const struct profile_location *location = &profile->locations[i];
		uint32_t index = id_map_get(&processes, location->pid, location->generation, NULL);

		/* Another id: a process without samples (the idle task). */
		if (index < count) {
			struct process_part *part = &(*parts)[index];

			append_index(&part->locations, &part->location_count,
				     &part->location_capacity, i);
		}
	}
	id_map_release(&processes);
	for (size_t i = 0; i < count; i++)
		(*profiles)[i].last_of_pid = !forked_later(profile, &(*profiles)[i]);
	return count;
}

/* The gzipped pprof profile of `part` in `process->data` (malloc'd). */
static bool make_profile(const struct profile *profile, const struct process_part *part,
			 struct process_profile *process, int64_t end)
{
	char *data = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&data, &size);
	bool failed = !out || emit_pprof_part(profile,
					      &(struct profile_part){part->samples, part->locations,
								     part->sample_count,
								     part->location_count},
					      end, out, &process->span) < 0;

	if (out && fclose(out) != 0)
		failed = true;
	if (failed) {
		free(data);
		return false;
	}
	process->data = (unsigned char *)data;
	process->size = size;
	return true;
}

long process_profiles_make(const char *perf_data, struct resolver *resolver,
			   struct process_profile **profiles)
{
	struct profile profile;
	long count = -1;

	*profiles = NULL;
	profile_init(&profile);
	profile.without_pid_0 = true; /* no process's */
	if (replay_capture(perf_data, resolver, &profile) == 0) {
		int64_t end = end_time_nanos(perf_data);
		struct process_part *parts;

		count = (long)list_processes(&profile, profiles, &parts);
		for (long i = 0; i < count; i++) {
			if (!make_profile(&profile, &parts[i], &(*profiles)[i], end))
				report_error("cannot encode the profile of pid %d: out of memory",
					     (int)(*profiles)[i].pid);
			free(parts[i].samples);
			free(parts[i].locations);
		}
		free(parts);
	}
	profile_release(&profile);
	return count;
}

void process_profiles_free(struct process_profile *profiles, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(profiles[i].data);
	free(profiles);
}
