#include "emit.h"

#include <inttypes.h>
#include <string.h>

/* The module as perf-script readers can split it off the line: they take
 * the text inside the last "(...)" as the module, so the " (deleted)" of
 * .NET's W^X mappings ("/memfd:doublemapper (deleted)") goes, and any other
 * space or parenthesis becomes '_'. */
static void write_module(const char *module, FILE *out)
{
	static const char deleted[] = " (deleted)";
	size_t length = strlen(module);

	if (length > strlen(deleted) && !strcmp(module + length - strlen(deleted), deleted))
		length -= strlen(deleted);
	for (size_t i = 0; i < length; i++)
		fputc(strchr(" ()", module[i]) ? '_' : module[i], out);
}

static void write_location(const struct profile *profile, const struct profile_location *location,
			   FILE *out)
{
	/* Inlined calls first, each on its own line at the same address. */
	for (uint32_t i = 0; i < location->frame_count; i++) {
		fprintf(out, "\t%16" PRIx64 " %s (", location->address,
			profile->frames[location->first_frame + i].function);
		write_module(location->module, out);
		fputs(")\n", out);
	}
}

/* The thread name right-aligned in 16 columns, as perf prints it. */
static void write_comm(const char *comm, FILE *out)
{
	for (size_t i = strlen(comm); i < 16; i++)
		fputc(' ', out);
	fputs(comm, out);
}

int emit_perf_script(const struct profile *profile, FILE *out)
{
	for (size_t i = 0; i < profile->sample_count; i++) {
		const struct profile_sample *sample = &profile->samples[i];
		const struct profile_stack *stack = &profile->stacks[sample->stack];

		/* Two spaces after the comm: PerfView finds the comm's end by
		 * " PID/TID" scanning forward, and a comm ending in " 2" would
		 * swallow a single space. */
		write_comm(sample->thread_name, out);
		fprintf(out,
			"  %5" PRIu32 "/%-5" PRIu32 " [%03" PRIu32 "] %5" PRIu64 ".%06" PRIu64
			": %10" PRIu64 " %s: \n",
			sample->pid, sample->tid, sample->cpu, sample->time / 1000000000,
			sample->time % 1000000000 / 1000, sample->period, profile->event_name);
		for (uint32_t level = 0; level < stack->depth; level++)
			write_location(
			    profile,
			    &profile->locations[profile->stack_locations[stack->first + level]],
			    out);
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}
