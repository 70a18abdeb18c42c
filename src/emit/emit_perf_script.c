#include "emit.h"

#include <inttypes.h>

static void write_location(const struct profile *profile, const struct profile_location *location,
			   FILE *out)
{
	/* Inlined calls first, each on its own line at the same address. */
	for (uint32_t i = 0; i < location->frame_count; i++)
		fprintf(out, "\t%16" PRIx64 " %s (%s)\n", location->address,
			profile->frames[location->first_frame + i].function, location->module);
}

int emit_perf_script(const struct profile *profile, FILE *out)
{
	for (size_t i = 0; i < profile->sample_count; i++) {
		const struct profile_sample *sample = &profile->samples[i];
		const struct profile_stack *stack = &profile->stacks[sample->stack];

		/* perf script's own header for these fields (its
		 * perf_sample__fprintf_start): with a call chain the comm is
		 * neither padded nor aligned, and FlameGraph's
		 * stackcollapse-perf, speedscope and FlameScope expect that. */
		fprintf(out,
			"%s %5" PRIu32 "/%-5" PRIu32 " [%03" PRIu32 "] %5" PRIu64 ".%06" PRIu64
			": %10" PRIu64 " %s: \n",
			sample->thread_name, sample->pid, sample->tid, sample->cpu,
			sample->time / 1000000000, sample->time % 1000000000 / 1000, sample->period,
			profile->event_name);
		for (uint32_t level = 0; level < stack->depth; level++)
			write_location(
			    profile,
			    &profile->locations[profile->stack_locations[stack->first + level]],
			    out);
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}
