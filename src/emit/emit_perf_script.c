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

/* perf script -F +srcline's line under a frame: "  FILE:LINE", the file's
 * base name; the kernel's frames, which have none, "[kernel.kallsyms][ADDR]"
 * as perf writes them. Nothing for other frames without a line. */
static void write_source_line(const struct profile_location *location,
			      const struct profile_frame *frame, FILE *out)
{
	if (frame->file) {
		const char *base = strrchr(frame->file, '/');

		fprintf(out, "  %s:%" PRIu32 "\n", base ? base + 1 : frame->file, frame->line);
	} else if (location->kernel) {
		fprintf(out, "  [kernel.kallsyms][%" PRIx64 "]\n", location->address);
	}
}

static void write_location(const struct profile *profile, const struct profile_location *location,
			   bool source_lines, FILE *out)
{
	/* Inlined calls first, each on its own line at the same address. */
	for (uint32_t i = 0; i < location->frame_count; i++) {
		const struct profile_frame *frame = &profile->frames[location->first_frame + i];

		fprintf(out, "\t%16" PRIx64 " %s (", location->address, frame->function);
		write_module(location->module, out);
		fputs(")\n", out);
		if (source_lines)
			write_source_line(location, frame, out);
	}
}

/* The frame lines of every location, formatted once: a location recurs in
 * many samples, and formatting each time took most of the writing. */
struct location_lines {
	char *text;
	size_t size;
	size_t *start; /* location i's lines: text[start[i] .. start[i + 1]) */
};

static int format_locations(const struct profile *profile, bool source_lines,
			    struct location_lines *lines)
{
	FILE *buffer = open_memstream(&lines->text, &lines->size);

	if (!buffer)
		return -1;
	lines->start = xmalloc((profile->location_count + 1) * sizeof(*lines->start));
	for (size_t i = 0; i < profile->location_count; i++) {
		lines->start[i] = (size_t)ftell(buffer);
		write_location(profile, &profile->locations[i], source_lines, buffer);
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

/* The text of one event, made whole before it is written: one fwrite an
 * event rather than one a line (stdio's locking and bookkeeping for each
 * of tens of millions of lines showed). */
struct event_text {
	char *bytes;
	size_t size, capacity;
};

/* Room for `size` more bytes; returns where they go. */
static char *reserve(struct event_text *text, size_t size)
{
	grow_array((void **)&text->bytes, &text->capacity, text->size + size, 1);
	return text->bytes + text->size;
}

static void append_bytes(struct event_text *text, const void *bytes, size_t size)
{
	memcpy(reserve(text, size), bytes, size);
	text->size += size;
}

static void append_string(struct event_text *text, const char *string)
{
	append_bytes(text, string, strlen(string));
}

static void append_char(struct event_text *text, char c)
{
	*reserve(text, 1) = c;
	text->size++;
}

/* decimal_append_padded() at the end of `text`. */
static void append_number(struct event_text *text, uint64_t value, int width, char pad,
			  bool left_aligned)
{
	char *start = reserve(text, 20 + (size_t)width), *cursor = start;

	decimal_append_padded(&cursor, value, width, pad, left_aligned);
	text->size += (size_t)(cursor - start);
}

/* printf's %d. */
static void append_signed(struct event_text *text, int64_t value)
{
	if (value < 0)
		append_char(text, '-');
	append_number(text, value < 0 ? -(uint64_t)value : (uint64_t)value, 0, ' ', false);
}

/* prev_state as the tracepoint's print format spells it: the state
 * letters joined by '|', "R" for a thread preempted while running, and
 * "+" when the kernel marked the preemption (TASK_REPORT_MAX). */
static void append_prev_state(struct event_text *text, int64_t state)
{
	static const char letters[] = "SDTtXZPI";
	bool any = false;

	for (unsigned bit = 0; bit < sizeof(letters) - 1; bit++)
		if (state & (1 << bit)) {
			if (any)
				append_char(text, '|');
			append_char(text, letters[bit]);
			any = true;
		}
	if (!any)
		append_char(text, 'R');
	if (state & 0x100)
		append_char(text, '+');
}

/* perf script's own header for these fields (its perf_sample__fprintf_start),
 * "COMM PID/TID [CPU] SECONDS.MICROS: PERIOD EVENT: ": with a call chain the
 * comm is neither padded nor aligned, and FlameGraph's stackcollapse-perf,
 * speedscope and FlameScope expect that. */
static void append_event_header(struct event_text *text, const struct profile_sample *sample,
				uint64_t period, const char *event_name)
{
	append_string(text, sample->thread_name);
	if (comm_hides_pid_from_perfview(sample->thread_name, sample->pid))
		append_char(text, ' ');
	append_char(text, ' ');
	append_number(text, sample->pid, 5, ' ', false);
	append_char(text, '/');
	append_number(text, sample->tid, 5, ' ', true);
	append_string(text, " [");
	append_number(text, sample->cpu, 3, '0', false);
	append_string(text, "] ");
	append_number(text, sample->time / 1000000000, 5, ' ', false);
	append_char(text, '.');
	append_number(text, sample->time % 1000000000 / 1000, 6, '0', false);
	append_string(text, ": ");
	append_number(text, period, 10, ' ', false);
	append_char(text, ' ');
	append_string(text, event_name);
	append_string(text, ": ");
}

/* A thread's return as a switch naming it as the next thread, the one
 * before unknown (-1, "?"), in the returning thread's name, as its
 * record is. */
static void append_return(struct event_text *text, const struct profile_sample *sample)
{
	append_event_header(text, sample, 1, "sched:sched_switch");
	append_string(text, "prev_comm=? prev_pid=-1 prev_prio=-1 prev_state=R ==> next_comm=");
	append_string(text, sample->thread_name);
	append_string(text, " next_pid=");
	append_number(text, sample->tid, 0, ' ', false);
	append_string(text, " next_prio=-1");
}

/* One event: its header, a sched_switch's fields when `switched` is not
 * NULL or a return's when `returned`, then the stack. */
static void write_event(const struct profile *profile, const struct profile_sample *sample,
			const struct profile_switch *switched, bool returned,
			const struct location_lines *lines, struct event_text *text, FILE *out)
{
	const struct profile_stack *stack = &profile->stacks[sample->stack];

	text->size = 0;
	if (returned) {
		append_return(text, sample);
	} else if (switched) {
		append_event_header(text, sample, 1, "sched:sched_switch");
		append_string(text, "prev_comm=");
		append_string(text, sample->thread_name);
		append_string(text, " prev_pid=");
		append_number(text, sample->tid, 0, ' ', false);
		append_string(text, " prev_prio=");
		append_signed(text, switched->prev_prio);
		append_string(text, " prev_state=");
		append_prev_state(text, switched->prev_state);
		append_string(text, " ==> next_comm=");
		append_string(text, switched->next_comm);
		append_string(text, " next_pid=");
		append_signed(text, switched->next_pid);
		append_string(text, " next_prio=");
		append_signed(text, switched->next_prio);
	} else {
		append_event_header(text, sample, sample->period, profile->event_name);
	}
	append_char(text, '\n');
	for (uint32_t level = 0; level < stack->depth; level++) {
		uint32_t location = profile->stack_locations[stack->first + level];

		append_bytes(text, lines->text + lines->start[location],
			     lines->start[location + 1] - lines->start[location]);
	}
	append_char(text, '\n');
	fwrite(text->bytes, 1, text->size, out);
}

int emit_perf_script(const struct profile *profile, bool source_lines, FILE *out)
{
	struct location_lines lines = {0};
	struct event_text text = {0};
	size_t next_sample = 0, next_switch = 0, next_return = 0;

	if (format_locations(profile, source_lines, &lines) < 0) {
		free(lines.start);
		free(lines.text);
		return -1;
	}
	/* Samples, scheduler switches and returns (--off-cpu), in time order:
	 * at equal times a switch, then a return, then a sample. */
	for (;;) {
		uint64_t sample_time = next_sample < profile->sample_count
					   ? profile->samples[next_sample].time
					   : UINT64_MAX;
		uint64_t switch_time = next_switch < profile->switch_count
					   ? profile->switches[next_switch].sample.time
					   : UINT64_MAX;
		uint64_t return_time = next_return < profile->return_count
					   ? profile->returns[next_return].sample.time
					   : UINT64_MAX;

		if (next_switch < profile->switch_count && switch_time <= return_time &&
		    switch_time <= sample_time) {
			const struct profile_switch *switched = &profile->switches[next_switch++];

			write_event(profile, &switched->sample, switched, false, &lines, &text,
				    out);
		} else if (next_return < profile->return_count && return_time <= sample_time)
			write_event(profile, &profile->returns[next_return++].sample, NULL, true,
				    &lines, &text, out);
		else if (next_sample < profile->sample_count)
			write_event(profile, &profile->samples[next_sample++], NULL, false, &lines,
				    &text, out);
		else
			break;
	}
	free(text.bytes);
	free(lines.start);
	free(lines.text);
	return ferror(out) ? -1 : 0;
}
