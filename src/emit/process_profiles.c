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

/* Unix time minus the samples' time: from perf.data's clock moment, else
 * (a capture without one) from when perf.data was finished, taken as the
 * time of its last sample. */
static int64_t wall_clock_offset(const char *perf_data, const struct profile *profile)
{
	struct stat status;
	uint64_t last = 0;

	if (profile->has_wall_clock)
		return profile->wall_clock_offset;
	for (size_t i = 0; i < profile->sample_count; i++)
		if (profile->samples[i].time > last)
			last = profile->samples[i].time;
	return stat(perf_data, &status) == 0 ? (int64_t)status.st_mtim.tv_sec * 1000000000 +
						   status.st_mtim.tv_nsec - (int64_t)last
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
 * first sample came, each with its part of the profile; not the idle task
 * (pid 0), which runs while the CPU has nothing to do, nor the kernel's pid
 * -1, a task sampled as it exited, no process any more (an "[unknown]"
 * series of pid -1 in the agent's pushes before). One pass over the
 * samples and one over the locations, whatever the number of processes. */
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

		if (sample->pid == 0 || sample->pid == UINT32_MAX)
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

static int compare_indices(const void *a, const void *b)
{
	uint32_t left = *(const uint32_t *)a, right = *(const uint32_t *)b;

	return (left > right) - (left < right);
}

/* The parts of `members` as one, in the profile's order (time order for
 * the samples), each array malloc'd. */
static void join_parts(const struct process_profiles *profiles, const size_t *members,
		       size_t member_count, struct process_part *joined)
{
	*joined = (struct process_part){0};
	for (size_t m = 0; m < member_count; m++) {
		const struct process_part *part = &profiles->parts[members[m]];

		for (size_t i = 0; i < part->sample_count; i++)
			append_index(&joined->samples, &joined->sample_count,
				     &joined->sample_capacity, part->samples[i]);
		for (size_t i = 0; i < part->location_count; i++)
			append_index(&joined->locations, &joined->location_count,
				     &joined->location_capacity, part->locations[i]);
	}
	if (member_count > 1) {
		qsort(joined->samples, joined->sample_count, sizeof(uint32_t), compare_indices);
		qsort(joined->locations, joined->location_count, sizeof(uint32_t), compare_indices);
	}
}

int process_profiles_encode(const struct process_profiles *profiles, const size_t *members,
			    size_t member_count, unsigned char **data, size_t *size,
			    struct pprof_span *span)
{
	struct process_part part;
	char *encoded = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&encoded, &length);
	int64_t end = 0;
	bool failed;

	join_parts(profiles, members, member_count, &part);
	/* Ends with its last sample: emit dates it by its first. */
	if (part.sample_count) {
		const struct profile_sample *last =
		    &profiles->profile.samples[part.samples[part.sample_count - 1]];

		end = (int64_t)(last->time + last->period) + profiles->wall_clock_offset;
	}
	failed =
	    !out || emit_pprof_part(&profiles->profile,
				    &(struct profile_part){part.samples, part.locations,
							   part.sample_count, part.location_count},
				    end, out, span) < 0;
	if (out && fclose(out) != 0)
		failed = true;
	free(part.samples);
	free(part.locations);
	if (failed) {
		free(encoded);
		return -1;
	}
	*data = (unsigned char *)encoded;
	*size = length;
	return 0;
}

int process_profiles_read(const char *perf_data, struct resolver *resolver,
			  bool (*takes)(uint32_t pid, void *context), void *context,
			  struct process_profiles *profiles)
{
	*profiles = (struct process_profiles){0};
	profile_init(&profiles->profile);
	profiles->profile.without_pid_0 = true; /* no process's */
	profiles->profile.takes_process = takes;
	profiles->profile.takes_context = context;
	if (replay_capture(perf_data, resolver, &profiles->profile) < 0) {
		profile_release(&profiles->profile);
		return -1;
	}
	profiles->wall_clock_offset = wall_clock_offset(perf_data, &profiles->profile);
	profiles->count =
	    list_processes(&profiles->profile, &profiles->processes, &profiles->parts);
	return 0;
}

struct process_samples process_profiles_samples(const struct process_profiles *profiles,
						size_t index)
{
	return (struct process_samples){profiles->parts[index].samples,
					profiles->parts[index].sample_count};
}

void process_profiles_release(struct process_profiles *profiles)
{
	for (size_t i = 0; i < profiles->count; i++) {
		free(profiles->parts[i].samples);
		free(profiles->parts[i].locations);
	}
	free(profiles->parts);
	free(profiles->processes);
	profile_release(&profiles->profile);
	*profiles = (struct process_profiles){0};
}
