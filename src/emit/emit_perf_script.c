#include "decimal.h"
#include "emit.h"
#include "util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
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

/* The frame lines of every location, formatted once: a location recurs in
 * many samples, and formatting each time took most of the writing. */
struct location_lines {
	char *text;
	size_t size;
	size_t *start; /* location i's lines: text[start[i] .. start[i + 1]) */
};

static int format_locations(const struct profile *profile, struct location_lines *lines)
{
	FILE *buffer = open_memstream(&lines->text, &lines->size);

	if (!buffer)
		return -1;
	lines->start = xmalloc((profile->location_count + 1) * sizeof(*lines->start));
	for (size_t i = 0; i < profile->location_count; i++) {
		lines->start[i] = (size_t)ftell(buffer);
		write_location(profile, &profile->locations[i], buffer);
	}
	lines->start[profile->location_count] = (size_t)ftell(buffer);
	return fclose(buffer) == 0 ? 0 : -1;
}

/* Whether a comm ends in " DIGITS" ("job 2"). PerfView finds where the comm
 * ends by scanning for " PID/": a candidate " 2" that fails takes the space
 * after it, and with a pid of five digits or more perf leaves only that one
 * space, so the real " PID/" is never seen. One more space there, which
 * every other reader skips as perf's own padding, keeps the sample. */
static bool comm_hides_pid_from_perfview(const char *comm, uint32_t pid)
{
	size_t end = strlen(comm), digits = end;

	while (digits > 0 && isdigit((unsigned char)comm[digits - 1]))
		digits--;
	return pid >= 10000 && digits < end && digits > 0 && comm[digits - 1] == ' ';
}

/* prev_state as the tracepoint's print format spells it: the state
 * letters joined by '|', "R" for a thread preempted while running, and
 * "+" when the kernel marked the preemption (TASK_REPORT_MAX). */
static void write_prev_state(int64_t state, FILE *out)
{
	static const char letters[] = "SDTtXZPI";
	bool any = false;

	for (unsigned bit = 0; bit < sizeof(letters) - 1; bit++)
		if (state & (1 << bit)) {
			if (any)
				fputc('|', out);
			fputc(letters[bit], out);
			any = true;
		}
	if (!any)
		fputc('R', out);
	if (state & 0x100)
		fputc('+', out);
}

static void append_text(char **cursor, const char *text)
{
	size_t length = strlen(text);

	memcpy(*cursor, text, length);
	*cursor += length;
}

/* perf script's own header for these fields (its perf_sample__fprintf_start),
 * "COMM PID/TID [CPU] SECONDS.MICROS: PERIOD EVENT: ": with a call chain the
 * comm is neither padded nor aligned, and FlameGraph's stackcollapse-perf,
 * speedscope and FlameScope expect that. */
static void write_event_header(const struct profile_sample *sample, uint64_t period,
			       const char *event_name, FILE *out)
{
	char numbers[128], *cursor = numbers;

	fputs(sample->thread_name, out);
	if (comm_hides_pid_from_perfview(sample->thread_name, sample->pid))
		fputc(' ', out);
	*cursor++ = ' ';
	decimal_append_padded(&cursor, sample->pid, 5, ' ', false);
	*cursor++ = '/';
	decimal_append_padded(&cursor, sample->tid, 5, ' ', true);
	append_text(&cursor, " [");
	decimal_append_padded(&cursor, sample->cpu, 3, '0', false);
	append_text(&cursor, "] ");
	decimal_append_padded(&cursor, sample->time / 1000000000, 5, ' ', false);
	*cursor++ = '.';
	decimal_append_padded(&cursor, sample->time % 1000000000 / 1000, 6, '0', false);
	append_text(&cursor, ": ");
	decimal_append_padded(&cursor, period, 10, ' ', false);
	*cursor++ = ' ';
	fwrite(numbers, 1, (size_t)(cursor - numbers), out);
	fputs(event_name, out);
	fputs(": ", out);
}

/* One event: its header, a sched_switch's fields when `switched` is not
 * NULL, then the stack. */
static void write_event(const struct profile *profile, const struct profile_sample *sample,
			const struct profile_switch *switched, const struct location_lines *lines,
			FILE *out)
{
	const struct profile_stack *stack = &profile->stacks[sample->stack];

	if (switched) {
		write_event_header(sample, 1, "sched:sched_switch", out);
		fprintf(out, "prev_comm=%s prev_pid=%" PRIu32 " prev_prio=%" PRId32 " prev_state=",
			sample->thread_name, sample->tid, switched->prev_prio);
		write_prev_state(switched->prev_state, out);
		fprintf(out, " ==> next_comm=%s next_pid=%" PRId32 " next_prio=%" PRId32,
			switched->next_comm, switched->next_pid, switched->next_prio);
	} else {
		write_event_header(sample, sample->period, profile->event_name, out);
	}
	fputc('\n', out);
	for (uint32_t level = 0; level < stack->depth; level++) {
		uint32_t location = profile->stack_locations[stack->first + level];

		fwrite(lines->text + lines->start[location], 1,
		       lines->start[location + 1] - lines->start[location], out);
	}
	fputc('\n', out);
}

int emit_perf_script(const struct profile *profile, FILE *out)
{
	struct location_lines lines = {0};
	size_t next_switch = 0;

	if (format_locations(profile, &lines) < 0) {
		free(lines.start);
		free(lines.text);
		return -1;
	}
	/* Samples and scheduler switches (--off-cpu), in time order. */
	for (size_t i = 0; i <= profile->sample_count; i++) {
		for (; next_switch < profile->switch_count &&
		       (i == profile->sample_count ||
			profile->switches[next_switch].sample.time <= profile->samples[i].time);
		     next_switch++)
			write_event(profile, &profile->switches[next_switch].sample,
				    &profile->switches[next_switch], &lines, out);
		if (i < profile->sample_count)
			write_event(profile, &profile->samples[i], NULL, &lines, out);
	}
	free(lines.start);
	free(lines.text);
	return ferror(out) ? -1 : 0;
}
