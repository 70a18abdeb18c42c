/* speedscope.json, in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): the profiles come
 * first and the shared frames last (JSON keys have no order), so frames are
 * numbered as the samples meet them and everything is written in one pass. */
#include "decimal.h"
#include "emit.h"
#include "id_map.h"
#include "managed_name.h"
#include "string_table.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A thread's samples, as indices into profile.samples in time order. */
struct thread_samples {
	uint32_t *samples;
	size_t count, capacity;
};

/* Where a stack's text is in speedscope_writer.stack_text. */
struct text_span {
	size_t start, length; /* length 0: not made yet */
};

/* Where a shared frame's code is written: the source file of its frames
 * and the first line of it the profile saw. */
struct frame_source {
	const char *file; /* NULL: no line known */
	uint32_t line;
};

struct speedscope_writer {
	const struct profile *profile;
	FILE *out;
	struct id_map frames;	      /* (readable name, module) -> shared frame index */
	struct frame_source *sources; /* by shared frame index */
	size_t source_capacity;
	/* Each profile frame's name as the flame graph and folded stacks show
	 * it (a .NET method as "Assembly!Type::Method"), made when first met. */
	const char **readable_names;
	struct string_table *names; /* owns the readable names made */
	/* Each stack's frame indices as written ("[0,4,7]"), made when a
	 * sample first has it: stacks recur in many samples. */
	char *stack_text;
	size_t stack_text_size, stack_text_capacity;
	struct text_span *stack_spans; /* by stack id */
	bool clock;		       /* periods are nanoseconds of CPU time */
};

static void write_json_string(const char *text, FILE *out)
{
	fputc('"', out);
	for (size_t clean; *text; text += clean) {
		clean = strcspn(text, "\"\\");
		fwrite(text, 1, clean, out);
		if (!text[clean])
			break;
		fputc('\\', out);
		fputc(text[clean], out);
		clean++;
	}
	fputc('"', out);
}

/* Frame `index` of the profile by its readable name; a name that is no
 * .NET method's stays as it is. */
static const char *readable_name(struct speedscope_writer *writer, uint32_t index)
{
	const char *function = writer->profile->frames[index].function;
	char *readable;

	if (!writer->readable_names[index]) {
		readable = managed_name_readable(function, false);
		writer->readable_names[index] =
		    readable ? string_table_intern(writer->names, readable) : function;
		free(readable);
	}
	return writer->readable_names[index];
}

/* Appends shared frame `frame` to the stack text being made. */
static void append_frame(struct speedscope_writer *writer, uint32_t frame, bool first)
{
	char *cursor;

	grow_array((void **)&writer->stack_text, &writer->stack_text_capacity,
		   writer->stack_text_size + 24, 1);
	cursor = writer->stack_text + writer->stack_text_size;
	if (!first)
		*cursor++ = ',';
	decimal_append(&cursor, frame);
	writer->stack_text_size = (size_t)(cursor - writer->stack_text);
}

/* A frame of the profile under shared frame `source`: the shared frame
 * takes the first source file seen, and the lowest line of it. */
static void note_source(struct frame_source *source, const struct profile_frame *frame)
{
	if (!frame->file)
		return;
	if (!source->file)
		*source = (struct frame_source){frame->file, frame->line};
	else if (source->file == frame->file && frame->line < source->line)
		source->line = frame->line;
}

/* Makes the text of stack `id`: its shared frames, root first. Each
 * location's inlined calls are innermost first in the profile, so both
 * orders turn. */
static void make_stack_text(struct speedscope_writer *writer, uint32_t id)
{
	const struct profile *profile = writer->profile;
	const struct profile_stack *stack = &profile->stacks[id];
	size_t start = writer->stack_text_size;

	grow_array((void **)&writer->stack_text, &writer->stack_text_capacity, start + 1, 1);
	writer->stack_text[writer->stack_text_size++] = '[';
	for (uint32_t level = stack->depth; level-- > 0;) {
		const struct profile_location *location =
		    &profile->locations[profile->stack_locations[stack->first + level]];

		for (uint32_t frame = location->frame_count; frame-- > 0;) {
			const struct profile_frame *named =
			    &profile->frames[location->first_frame + frame];
			const char *name = readable_name(writer, location->first_frame + frame);
			bool added;
			uint32_t shared = id_map_get(&writer->frames, (uintptr_t)name,
						     (uintptr_t)location->module, &added);

			if (added) {
				grow_array((void **)&writer->sources, &writer->source_capacity,
					   shared + 1, sizeof(*writer->sources));
				writer->sources[shared] = (struct frame_source){0};
			}
			note_source(&writer->sources[shared], named);
			append_frame(writer, shared, writer->stack_text_size == start + 1);
		}
	}
	grow_array((void **)&writer->stack_text, &writer->stack_text_capacity,
		   writer->stack_text_size + 1, 1);
	writer->stack_text[writer->stack_text_size++] = ']';
	writer->stack_spans[id] = (struct text_span){start, writer->stack_text_size - start};
}

static void write_stack(struct speedscope_writer *writer, uint32_t stack, FILE *out)
{
	if (!writer->stack_spans[stack].length)
		make_stack_text(writer, stack);
	fwrite(writer->stack_text + writer->stack_spans[stack].start, 1,
	       writer->stack_spans[stack].length, out);
}

/* Calls `visit` for each stretch of the thread's timeline: a sample with
 * its stack, or (stack UINT32_MAX) the idle time before it, so the weights
 * add up to the time from the capture's first sample. A gap shorter than a
 * period is the timer's jitter, not idle time. */
static uint64_t walk_timeline(struct speedscope_writer *writer, const struct thread_samples *thread,
			      void (*visit)(struct speedscope_writer *, uint32_t stack,
					    uint64_t weight, bool first),
			      uint64_t start)
{
	const struct profile *profile = writer->profile;
	uint64_t cursor = 0;
	bool first = true;

	for (size_t i = 0; i < thread->count; i++) {
		const struct profile_sample *sample = &profile->samples[thread->samples[i]];
		uint64_t at = sample->time - start;

		if (writer->clock && at > cursor + sample->period) {
			visit(writer, UINT32_MAX, at - cursor, first);
			first = false;
			cursor = at;
		}
		visit(writer, sample->stack, sample->period, first);
		first = false;
		cursor += sample->period;
	}
	return cursor;
}

static void visit_stack(struct speedscope_writer *writer, uint32_t stack, uint64_t weight,
			bool first)
{
	(void)weight;
	if (!first)
		fputc(',', writer->out);
	if (stack == UINT32_MAX)
		fputs("[]", writer->out);
	else
		write_stack(writer, stack, writer->out);
}

static void visit_weight(struct speedscope_writer *writer, uint32_t stack, uint64_t weight,
			 bool first)
{
	char text[24], *cursor = text;

	(void)stack;
	if (!first)
		*cursor++ = ',';
	decimal_append(&cursor, weight);
	fwrite(text, 1, (size_t)(cursor - text), writer->out);
}

static void write_thread(struct speedscope_writer *writer, const struct thread_samples *thread,
			 uint64_t start)
{
	const struct profile_sample *sample = &writer->profile->samples[thread->samples[0]];
	FILE *out = writer->out;
	char *name = xasprintf("%s (tid %" PRIu32 ") of %s (pid %" PRIu32 ")", sample->thread_name,
			       sample->tid, sample->process_name, sample->pid);
	uint64_t end;

	fputs("{\"type\":\"sampled\",\"name\":", out);
	write_json_string(name, out);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"samples\":[",
		writer->clock ? "nanoseconds" : "none");
	walk_timeline(writer, thread, visit_stack, start);
	fputs("],\"weights\":[", out);
	end = walk_timeline(writer, thread, visit_weight, start);
	fprintf(out, "],\"endValue\":%" PRIu64 "}", end);
	free(name);
}

/* The samples of each thread, threads in the order they first ran. */
static struct thread_samples *group_by_thread(const struct profile *profile, size_t *count)
{
	struct id_map threads = {0};
	struct thread_samples *groups = NULL;
	size_t capacity = 0;

	for (uint32_t i = 0; i < profile->sample_count; i++) {
		const struct profile_sample *sample = &profile->samples[i];
		bool added;
		uint32_t thread = id_map_get(&threads, sample->pid, sample->tid, &added);

		if (added) {
			grow_array((void **)&groups, &capacity, thread + 1, sizeof(*groups));
			groups[thread] = (struct thread_samples){0};
		}
		grow_array((void **)&groups[thread].samples, &groups[thread].capacity,
			   groups[thread].count + 1, sizeof(*groups[thread].samples));
		groups[thread].samples[groups[thread].count++] = i;
	}
	*count = threads.count;
	id_map_release(&threads);
	return groups;
}

static void write_shared_frames(struct speedscope_writer *writer)
{
	FILE *out = writer->out;

	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < writer->frames.count; i++) {
		const struct id_map_entry *key = &writer->frames.keys[i];

		const struct frame_source *source = &writer->sources[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		write_json_string((const char *)(uintptr_t)key->first, out);
		/* The source file where it is known, else the module. */
		fputs(",\"file\":", out);
		write_json_string(
		    source->file ? source->file : (const char *)(uintptr_t)key->second, out);
		if (source->file)
			fprintf(out, ",\"line\":%" PRIu32, source->line);
		fputc('}', out);
	}
	fputs("]}", out);
}

int emit_speedscope(const struct profile *profile, FILE *out)
{
	struct speedscope_writer writer = {
	    .profile = profile,
	    .out = out,
	    .stack_spans = xcalloc(profile->stack_count + 1, sizeof(*writer.stack_spans)),
	    .readable_names = xcalloc(profile->frame_count + 1, sizeof(*writer.readable_names)),
	    .names = string_table_new(),
	    .clock = !strcmp(profile->event_name, "cpu-clock") ||
		     !strcmp(profile->event_name, "task-clock"),
	};
	size_t thread_count, busiest = 0;
	struct thread_samples *threads = group_by_thread(profile, &thread_count);
	uint64_t start = profile->sample_count ? profile->samples[0].time : 0;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"profiles\":[",
	      out);
	for (size_t i = 0; i < thread_count; i++) {
		if (i)
			fputc(',', out);
		write_thread(&writer, &threads[i], start);
		if (threads[i].count > threads[busiest].count)
			busiest = i;
	}
	fputs("],", out);
	write_shared_frames(&writer);
	fprintf(out, ",\"activeProfileIndex\":%zu,\"exporter\":\"profcpu %s\",\"name\":", busiest,
		PROFCPU_VERSION);
	write_json_string(profile->sample_count ? profile->samples[0].process_name : "profcpu",
			  out);
	fputs("}\n", out);
	for (size_t i = 0; i < thread_count; i++)
		free(threads[i].samples);
	free(threads);
	free(writer.stack_text);
	free(writer.stack_spans);
	free(writer.readable_names);
	string_table_free(writer.names);
	free(writer.sources);
	id_map_release(&writer.frames);
	return ferror(out) ? -1 : 0;
}
