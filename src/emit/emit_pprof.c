/* profile.pb.gz: pprof's profile.proto, encoded by protobuf-c (Debian's
 * libprotobuf-c) from pprof/profile.proto, gzip-compressed by zlib. */
#include "emit.h"
#include "managed_name.h"
#include "id_map.h"
#include "profile.pb-c.h"
#include "string_table.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Sample values, in the order of the sample types below. Off-CPU time,
 * once it is recorded, becomes a third value (off_cpu/nanoseconds) here
 * and in describe_values(). */
enum { VALUE_SAMPLES, VALUE_CPU, VALUE_COUNT };

struct pprof_builder {
	const struct profile *profile;
	const struct profile_part *part;   /* NULL: the whole profile */
	const struct pprof_values *values; /* NULL: CPU samples' */
	Profile message;
	size_t string_capacity, mapping_capacity, function_capacity;
	struct id_map strings;		     /* interned text's address -> string_table index */
	struct id_map functions;	     /* name's string index -> Function id - 1 */
	struct id_map mappings;		     /* module's string index -> Mapping id - 1 */
	struct id_map groups;		     /* (thread name, label value) -> group id */
	struct id_map samples;		     /* (stack and pid, group) -> Sample index */
	struct string_table *readable_names; /* owns the functions' short names, the pids' text */
};

/* The string table index of `text`, which is interned or a literal: the
 * table is keyed by address, and each is added once. */
static int64_t string_index(struct pprof_builder *builder, const char *text)
{
	bool added;
	uint32_t index = id_map_get(&builder->strings, (uintptr_t)text, 0, &added);

	if (added) {
		grow_array((void **)&builder->message.string_table, &builder->string_capacity,
			   index + 1, sizeof(char *));
		builder->message.string_table[index] = (char *)text;
		builder->message.n_string_table = index + 1;
	}
	return index;
}

static ValueType *value_type(struct pprof_builder *builder, const char *type, const char *unit)
{
	ValueType *value = xmalloc(sizeof(*value));

	perftools__profiles__value_type__init(value);
	value->type = string_index(builder, type);
	value->unit = string_index(builder, unit);
	return value;
}

/* How many values each sample has. */
static size_t value_count(const struct pprof_builder *builder)
{
	return builder->values && !builder->values->weight_type ? 1 : VALUE_COUNT;
}

/* A profile of events: the count first, then the weight, which the
 * samples' periods hold; the count is the period type, as Go's mutex
 * profile has it. */
static void describe_event_values(struct pprof_builder *builder)
{
	const struct pprof_values *values = builder->values;
	Profile *message = &builder->message;

	message->n_sample_type = value_count(builder);
	message->sample_type = xcalloc(VALUE_COUNT, sizeof(*message->sample_type));
	message->sample_type[VALUE_SAMPLES] =
	    value_type(builder, values->count_type, values->count_unit);
	if (values->weight_type)
		message->sample_type[VALUE_CPU] =
		    value_type(builder, values->weight_type, values->weight_unit);
	message->period_type = value_type(builder, values->count_type, values->count_unit);
	message->period = 1;
	message->default_sample_type = message->sample_type[message->n_sample_type - 1]->type;
}

/* Clock events count nanoseconds of CPU time in their period; other events
 * (cycles) count events. */
static void describe_values(struct pprof_builder *builder)
{
	const char *event = builder->profile->event_name;
	bool clock = !strcmp(event, "cpu-clock") || !strcmp(event, "task-clock");
	Profile *message = &builder->message;

	if (builder->values) {
		describe_event_values(builder);
		return;
	}
	message->n_sample_type = VALUE_COUNT;
	message->sample_type = xcalloc(VALUE_COUNT, sizeof(*message->sample_type));
	message->sample_type[VALUE_SAMPLES] = value_type(builder, "samples", "count");
	message->sample_type[VALUE_CPU] =
	    clock ? value_type(builder, "cpu", "nanoseconds") : value_type(builder, event, "count");
	message->period_type =
	    value_type(builder, clock ? "cpu" : event, clock ? "nanoseconds" : "count");
	message->default_sample_type = message->sample_type[VALUE_CPU]->type;
}

static uint64_t mapping_id(struct pprof_builder *builder, const struct profile_location *location)
{
	bool added;
	int64_t filename = string_index(builder, location->module);
	uint32_t index = id_map_get(&builder->mappings, (uint64_t)filename, 0, &added);
	Profile *message = &builder->message;

	if (added) {
		Mapping *mapping = xmalloc(sizeof(*mapping));

		perftools__profiles__mapping__init(mapping);
		mapping->id = index + 1;
		mapping->filename = filename;
		if (location->build_id)
			mapping->build_id = string_index(builder, location->build_id);
		mapping->has_functions = true;
		mapping->has_filenames = true;
		mapping->has_line_numbers = true;
		mapping->has_inline_frames = true;
		grow_array((void **)&message->mapping, &builder->mapping_capacity, index + 1,
			   sizeof(*message->mapping));
		message->mapping[index] = mapping;
		message->n_mapping = index + 1;
	}
	return index + 1;
}

/* A function is named as in the flame graph (a .NET method as
 * "Assembly!Type::Method") and keeps the runtime's full name (signature,
 * tier) as its system name; its file is the source file of the first of its
 * frames that has one. */
static uint64_t function_id(struct pprof_builder *builder, const char *full_name, const char *file)
{
	bool added;
	int64_t full_name_index = string_index(builder, full_name);
	uint32_t index = id_map_get(&builder->functions, (uint64_t)full_name_index, 0, &added);
	Profile *message = &builder->message;

	if (added) {
		Function *function = xmalloc(sizeof(*function));
		char *readable = managed_name_readable(full_name, false);

		perftools__profiles__function__init(function);
		function->id = index + 1;
		function->system_name = full_name_index;
		function->name =
		    readable ? string_index(builder,
					    string_table_intern(builder->readable_names, readable))
			     : full_name_index;
		free(readable);
		grow_array((void **)&message->function, &builder->function_capacity, index + 1,
			   sizeof(*message->function));
		message->function[index] = function;
		message->n_function = index + 1;
	}
	if (file && !message->function[index]->filename)
		message->function[index]->filename = string_index(builder, file);
	return index + 1;
}

/* How many samples, and locations, the builder takes. */
static size_t sample_count(const struct pprof_builder *builder)
{
	return builder->part ? builder->part->sample_count : builder->profile->sample_count;
}

static size_t location_count(const struct pprof_builder *builder)
{
	return builder->part ? builder->part->location_count : builder->profile->location_count;
}

/* The profile's index of the builder's `i`th sample, and location. */
static size_t sample_at(const struct pprof_builder *builder, size_t i)
{
	return builder->part ? builder->part->samples[i] : i;
}

static size_t location_at(const struct pprof_builder *builder, size_t i)
{
	return builder->part ? builder->part->locations[i] : i;
}

/* pprof takes the first mapping for the profiled program ("File:"): the
 * executable named as the process is, when a sample ran in it. */
static void add_main_mapping(struct pprof_builder *builder)
{
	const struct profile *profile = builder->profile;
	const char *process =
	    sample_count(builder) ? profile->samples[sample_at(builder, 0)].process_name : NULL;

	for (size_t i = 0; process && i < location_count(builder); i++) {
		const struct profile_location *location =
		    &profile->locations[location_at(builder, i)];
		const char *base = strrchr(location->module, '/');

		if (base && !strcmp(base + 1, process)) {
			mapping_id(builder, location);
			return;
		}
	}
}

/* Location i + 1 is the profile's location i, its frames as lines; of one
 * process, only its own (ids then leave gaps, which pprof allows). */
static void add_locations(struct pprof_builder *builder)
{
	const struct profile *profile = builder->profile;
	Profile *message = &builder->message;

	add_main_mapping(builder);

	message->location = xcalloc(location_count(builder) + 1, sizeof(*message->location));
	for (size_t i = 0; i < location_count(builder); i++) {
		size_t index = location_at(builder, i);
		const struct profile_location *source = &profile->locations[index];
		Location *location = xmalloc(sizeof(*location));

		perftools__profiles__location__init(location);
		location->id = index + 1;
		location->mapping_id = mapping_id(builder, source);
		location->address = source->address;
		location->n_line = source->frame_count;
		location->line = xcalloc(source->frame_count, sizeof(*location->line));
		for (uint32_t frame = 0; frame < source->frame_count; frame++) {
			const struct profile_frame *named =
			    &profile->frames[source->first_frame + frame];
			Line *line = xmalloc(sizeof(*line));

			perftools__profiles__line__init(line);
			line->function_id = function_id(builder, named->function, named->file);
			line->line = named->line;
			location->line[frame] = line;
		}
		message->location[message->n_location++] = location;
	}
}

/* The value of the events' label of the sample at `index` (0: none). */
static uint64_t label_value(const struct pprof_builder *builder, size_t index)
{
	const struct pprof_values *values = builder->values;

	return values && values->label_values ? values->label_values[index] : 0;
}

static Sample *new_sample(struct pprof_builder *builder, const struct profile_sample *source,
			  uint64_t label)
{
	const struct profile *profile = builder->profile;
	const struct profile_stack *stack = &profile->stacks[source->stack];
	Sample *sample = xmalloc(sizeof(*sample));
	static const char *const label_keys[] = {"thread", "process", "pid", NULL};
	enum { LABEL_COUNT = sizeof(label_keys) / sizeof(*label_keys) - 1 };
	size_t count = LABEL_COUNT + (label != 0);
	char pid[16], text[24];

	perftools__profiles__sample__init(sample);
	sample->n_location_id = stack->depth;
	sample->location_id = xcalloc(stack->depth, sizeof(*sample->location_id));
	for (uint32_t level = 0; level < stack->depth; level++)
		sample->location_id[level] = profile->stack_locations[stack->first + level] + 1;
	sample->n_value = value_count(builder);
	sample->value = xcalloc(VALUE_COUNT, sizeof(*sample->value));
	sample->n_label = count;
	sample->label = xcalloc(count, sizeof(*sample->label));
	for (size_t i = 0; i < count; i++) {
		sample->label[i] = xmalloc(sizeof(*sample->label[i]));
		perftools__profiles__label__init(sample->label[i]);
		sample->label[i]->key = string_index(
		    builder, i < LABEL_COUNT ? label_keys[i] : builder->values->label_key);
	}
	sample->label[0]->str = string_index(builder, source->thread_name);
	sample->label[1]->str = string_index(builder, source->process_name);
	snprintf(pid, sizeof(pid), "%u", (unsigned)source->pid);
	sample->label[2]->str =
	    string_index(builder, string_table_intern(builder->readable_names, pid));
	if (label) {
		snprintf(text, sizeof(text), "%llu", (unsigned long long)label);
		sample->label[LABEL_COUNT]->str =
		    string_index(builder, string_table_intern(builder->readable_names, text));
	}
	return sample;
}

/* One pprof sample per (stack, pid, thread name, events' label): the thread
 * and process names and the pid are its labels, so a profile of many
 * processes (the agent's series) can still be filtered by each. */
static void add_samples(struct pprof_builder *builder)
{
	const struct profile *profile = builder->profile;
	Profile *message = &builder->message;
	const struct profile_sample *first = NULL, *last = NULL;
	uint64_t earliest = UINT64_MAX, latest = 0;
	size_t capacity = 0;

	for (size_t i = 0; i < sample_count(builder); i++) {
		const struct profile_sample *source = &profile->samples[sample_at(builder, i)];
		uint64_t label = label_value(builder, sample_at(builder, i));
		bool added;
		uint32_t index, group;

		first = first ? first : source;
		last = source;
		earliest = source->time < earliest ? source->time : earliest;
		latest = source->time > latest ? source->time : latest;
		group = id_map_get(&builder->groups, (uintptr_t)source->thread_name, label, NULL);
		index = id_map_get(&builder->samples,
				   (uint64_t)source->stack << 32 | (uintptr_t)source->pid, group,
				   &added);

		if (added) {
			grow_array((void **)&message->sample, &capacity, index + 1,
				   sizeof(*message->sample));
			message->sample[index] = new_sample(builder, source, label);
			message->n_sample = index + 1;
		}
		if (builder->values) {
			const uint64_t *counts = builder->values->counts;

			message->sample[index]->value[VALUE_SAMPLES] +=
			    counts ? (int64_t)counts[sample_at(builder, i)] : 1;
			if (builder->values->weight_type)
				message->sample[index]->value[VALUE_CPU] += (int64_t)source->period;
			continue;
		}
		message->sample[index]->value[VALUE_SAMPLES]++;
		message->sample[index]->value[VALUE_CPU] += (int64_t)source->period;
	}
	/* Events come in the stream's order, grouped by thread. */
	if (first && builder->values) {
		message->duration_nanos = (int64_t)(latest - earliest);
	} else if (first) {
		message->period = (int64_t)first->period;
		message->duration_nanos = (int64_t)(last->time - first->time + last->period);
	}
}

/* protobuf-c packs into this: each piece is deflated into the file. */
struct gzip_sink {
	ProtobufCBuffer base;
	z_stream stream;
	FILE *out;
	int status;
};

static void deflate_into_file(struct gzip_sink *sink, const uint8_t *data, size_t length, int flush)
{
	unsigned char chunk[1 << 16];

	sink->stream.next_in = (Bytef *)data;
	sink->stream.avail_in = (uInt)length;
	do {
		sink->stream.next_out = chunk;
		sink->stream.avail_out = sizeof(chunk);
		if (deflate(&sink->stream, flush) == Z_STREAM_ERROR)
			sink->status = -1;
		fwrite(chunk, 1, sizeof(chunk) - sink->stream.avail_out, sink->out);
	} while (sink->stream.avail_out == 0);
}

static void gzip_append(ProtobufCBuffer *buffer, size_t length, const uint8_t *data)
{
	deflate_into_file((struct gzip_sink *)buffer, data, length, Z_NO_FLUSH);
}

static int write_gzipped(const Profile *message, FILE *out)
{
	struct gzip_sink sink = {.base = {.append = gzip_append}, .out = out};

	/* 16 + 15: a gzip header, as pprof files have; level 1, as the archives. */
	if (deflateInit2(&sink.stream, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	protobuf_c_message_pack_to_buffer(&message->base, &sink.base);
	deflate_into_file(&sink, NULL, 0, Z_FINISH);
	deflateEnd(&sink.stream);
	if (sink.status < 0)
		errno = EIO;
	return sink.status < 0 || ferror(out) ? -1 : 0;
}

/* The strings belong to the profile or are literals: only the messages are
 * freed. */
static void release_message(Profile *message)
{
	for (size_t i = 0; i < message->n_sample; i++) {
		for (size_t label = 0; label < message->sample[i]->n_label; label++)
			free(message->sample[i]->label[label]);
		free(message->sample[i]->label);
		free(message->sample[i]->location_id);
		free(message->sample[i]->value);
		free(message->sample[i]);
	}
	for (size_t i = 0; i < message->n_location; i++) {
		for (size_t line = 0; line < message->location[i]->n_line; line++)
			free(message->location[i]->line[line]);
		free(message->location[i]->line);
		free(message->location[i]);
	}
	for (size_t i = 0; i < message->n_function; i++)
		free(message->function[i]);
	for (size_t i = 0; i < message->n_mapping; i++)
		free(message->mapping[i]);
	for (size_t i = 0; i < message->n_sample_type; i++)
		free(message->sample_type[i]);
	free(message->period_type);
	free(message->sample_type);
	free(message->sample);
	free(message->location);
	free(message->function);
	free(message->mapping);
	free(message->string_table);
}

static int emit(const struct profile *profile, const struct profile_part *part,
		const struct pprof_values *values, int64_t end_time_nanos, FILE *out,
		struct pprof_span *span)
{
	struct pprof_builder builder = {.profile = profile,
					.part = part,
					.values = values,
					.readable_names = string_table_new()};
	int status;

	perftools__profiles__profile__init(&builder.message);
	string_index(&builder, "");
	describe_values(&builder);
	add_locations(&builder);
	add_samples(&builder);
	if (end_time_nanos > builder.message.duration_nanos)
		builder.message.time_nanos = end_time_nanos - builder.message.duration_nanos;
	*span = (struct pprof_span){builder.message.time_nanos, builder.message.duration_nanos,
				    builder.message.period};
	status = write_gzipped(&builder.message, out);
	release_message(&builder.message);
	id_map_release(&builder.strings);
	id_map_release(&builder.functions);
	id_map_release(&builder.mappings);
	id_map_release(&builder.groups);
	id_map_release(&builder.samples);
	string_table_free(builder.readable_names);
	return status;
}

int emit_pprof(const struct profile *profile, int64_t end_time_nanos, FILE *out)
{
	struct pprof_span span;

	return emit(profile, NULL, NULL, end_time_nanos, out, &span);
}

int emit_pprof_events(const struct profile *profile, const struct pprof_values *values,
		      int64_t end_time_nanos, FILE *out)
{
	struct pprof_span span;

	return emit(profile, NULL, values, end_time_nanos, out, &span);
}

int emit_pprof_part(const struct profile *profile, const struct profile_part *part,
		    int64_t end_time_nanos, FILE *out, struct pprof_span *span)
{
	return emit(profile, part, NULL, end_time_nanos, out, span);
}
