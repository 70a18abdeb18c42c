#include "otlp_profiles.h"
#include "id_map.h"
#include "outputs.h"
#include "protobuf_writer.h"
#include "string_table.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <zlib.h>

/* Field numbers of opentelemetry-proto's messages. */
enum {
	REQUEST_RESOURCE_PROFILES = 1, /* ExportProfilesServiceRequest */
	REQUEST_DICTIONARY = 2,
	DICTIONARY_MAPPINGS = 1, /* ProfilesDictionary */
	DICTIONARY_LOCATIONS = 2,
	DICTIONARY_FUNCTIONS = 3,
	DICTIONARY_LINKS = 4,
	DICTIONARY_STRINGS = 5,
	DICTIONARY_ATTRIBUTES = 6,
	DICTIONARY_STACKS = 7,
	RESOURCE_PROFILES_RESOURCE = 1, /* ResourceProfiles */
	RESOURCE_PROFILES_SCOPES = 2,
	RESOURCE_ATTRIBUTES = 1, /* Resource */
	KEY_VALUE_KEY = 1,	 /* KeyValue */
	KEY_VALUE_VALUE = 2,
	ANY_VALUE_STRING = 1, /* AnyValue */
	ANY_VALUE_INT = 3,
	SCOPE_PROFILES_SCOPE = 1, /* ScopeProfiles */
	SCOPE_PROFILES_PROFILES = 2,
	SCOPE_NAME = 1, /* InstrumentationScope */
	SCOPE_VERSION = 2,
	PROFILE_SAMPLE_TYPE = 1, /* Profile */
	PROFILE_SAMPLES = 2,
	PROFILE_TIME = 3,
	PROFILE_DURATION = 4,
	PROFILE_PERIOD_TYPE = 5,
	PROFILE_PERIOD = 6,
	PROFILE_ID = 7,
	VALUE_TYPE_TYPE = 1, /* ValueType */
	VALUE_TYPE_UNIT = 2,
	SAMPLE_STACK = 1, /* Sample */
	SAMPLE_ATTRIBUTES = 2,
	SAMPLE_VALUES = 4,
	MAPPING_FILENAME = 4, /* Mapping */
	LOCATION_MAPPING = 1, /* Location */
	LOCATION_ADDRESS = 2,
	LOCATION_LINES = 3,
	LOCATION_ATTRIBUTES = 4,
	LINE_FUNCTION = 1, /* Line */
	LINE_LINE = 2,
	FUNCTION_NAME = 1, /* Function */
	FUNCTION_SYSTEM_NAME = 2,
	FUNCTION_FILENAME = 3,
	ATTRIBUTE_KEY = 1, /* KeyValueAndUnit */
	ATTRIBUTE_VALUE = 2,
	STACK_LOCATIONS = 1, /* Stack */
};

/* The dictionary being written: each table in its own buffer (the
 * repeated fields of one number, in order), and the ids of what it holds
 * (an entry's index is its id + 1: index 0 is the zero value). */
struct dictionary {
	struct protobuf_message tables[DICTIONARY_STACKS + 1];
	struct string_table *texts; /* owns one copy of each string */
	struct id_map strings, functions, mappings, locations, attributes, stacks;
};

static void dictionary_init(struct dictionary *dictionary)
{
	*dictionary = (struct dictionary){.texts = string_table_new()};
	for (unsigned table = DICTIONARY_MAPPINGS; table <= DICTIONARY_STACKS; table++)
		protobuf_bytes_field(&dictionary->tables[table], table, "", 0);
}

static int64_t string_index(struct dictionary *dictionary, const char *text)
{
	const char *copy = string_table_intern(dictionary->texts, text ? text : "");
	bool added;
	uint32_t id = id_map_get(&dictionary->strings, (uintptr_t)copy, 0, &added);

	if (added)
		protobuf_string_field(&dictionary->tables[DICTIONARY_STRINGS], DICTIONARY_STRINGS,
				      copy);
	return (int64_t)id + 1;
}

/* A string attribute KEY=VALUE of the attribute table. */
static int64_t attribute_index(struct dictionary *dictionary, const char *key, const char *value)
{
	int64_t key_index = string_index(dictionary, key),
		value_index = string_index(dictionary, value);
	bool added;
	uint32_t id =
	    id_map_get(&dictionary->attributes, (uint64_t)key_index, (uint64_t)value_index, &added);

	if (added) {
		struct protobuf_message entry = {0}, any = {0};

		protobuf_string_field(&any, ANY_VALUE_STRING, value);
		protobuf_varint_field(&entry, ATTRIBUTE_KEY, (uint64_t)key_index);
		protobuf_message_field(&entry, ATTRIBUTE_VALUE, &any);
		protobuf_message_field(&dictionary->tables[DICTIONARY_ATTRIBUTES],
				       DICTIONARY_ATTRIBUTES, &entry);
	}
	return (int64_t)id + 1;
}

static int64_t function_index(struct dictionary *dictionary, const struct profile_frame *frame)
{
	int64_t name = string_index(dictionary, frame->function);
	int64_t file = frame->file ? string_index(dictionary, frame->file) : 0;
	bool added;
	uint32_t id = id_map_get(&dictionary->functions, (uint64_t)name, (uint64_t)file, &added);

	if (added) {
		struct protobuf_message entry = {0};

		protobuf_varint_field(&entry, FUNCTION_NAME, (uint64_t)name);
		protobuf_varint_field(&entry, FUNCTION_SYSTEM_NAME, (uint64_t)name);
		if (file)
			protobuf_varint_field(&entry, FUNCTION_FILENAME, (uint64_t)file);
		protobuf_message_field(&dictionary->tables[DICTIONARY_FUNCTIONS],
				       DICTIONARY_FUNCTIONS, &entry);
	}
	return (int64_t)id + 1;
}

static int64_t mapping_index(struct dictionary *dictionary, const char *module)
{
	int64_t file = string_index(dictionary, module);
	bool added;
	uint32_t id = id_map_get(&dictionary->mappings, (uint64_t)file, 0, &added);

	if (added) {
		struct protobuf_message entry = {0};

		protobuf_varint_field(&entry, MAPPING_FILENAME, (uint64_t)file);
		protobuf_message_field(&dictionary->tables[DICTIONARY_MAPPINGS],
				       DICTIONARY_MAPPINGS, &entry);
	}
	return (int64_t)id + 1;
}

/* profile.frame.type as the eBPF profiler names it. */
static const char *frame_type(const struct profile_location *location)
{
	switch (location->kind) {
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_JIT:
		return "dotnet";
	default:
		return "native";
	}
}

/* The profile's location `index`, in the dictionary. */
static int64_t location_index(struct dictionary *dictionary, const struct profile *profile,
			      uint32_t index)
{
	const struct profile_location *location = &profile->locations[index];
	bool added;
	/* A location of one profile: the runtime events' have their own. */
	uint32_t id = id_map_get(&dictionary->locations, index, (uintptr_t)profile, &added);

	if (added) {
		struct protobuf_message entry = {0};
		int64_t type =
		    attribute_index(dictionary, "profile.frame.type", frame_type(location));

		if (location->module)
			protobuf_varint_field(
			    &entry, LOCATION_MAPPING,
			    (uint64_t)mapping_index(dictionary, location->module));
		protobuf_varint_field(&entry, LOCATION_ADDRESS, location->address);
		for (uint32_t i = 0; i < location->frame_count; i++) {
			const struct profile_frame *frame =
			    &profile->frames[location->first_frame + i];
			struct protobuf_message line = {0};

			protobuf_varint_field(&line, LINE_FUNCTION,
					      (uint64_t)function_index(dictionary, frame));
			if (frame->line)
				protobuf_varint_field(&line, LINE_LINE, frame->line);
			protobuf_message_field(&entry, LOCATION_LINES, &line);
		}
		protobuf_packed_field(&entry, LOCATION_ATTRIBUTES, &type, 1);
		protobuf_message_field(&dictionary->tables[DICTIONARY_LOCATIONS],
				       DICTIONARY_LOCATIONS, &entry);
	}
	return (int64_t)id + 1;
}

static int64_t stack_index(struct dictionary *dictionary, const struct profile *profile,
			   uint32_t index)
{
	bool added;
	uint32_t id = id_map_get(&dictionary->stacks, index, (uintptr_t)profile, &added);

	if (added) {
		const struct profile_stack *stack = &profile->stacks[index];
		int64_t *locations = xcalloc(stack->depth + 1, sizeof(*locations));
		struct protobuf_message entry = {0};

		for (uint32_t level = 0; level < stack->depth; level++)
			locations[level] = location_index(
			    dictionary, profile, profile->stack_locations[stack->first + level]);
		protobuf_packed_field(&entry, STACK_LOCATIONS, locations, stack->depth);
		protobuf_message_field(&dictionary->tables[DICTIONARY_STACKS], DICTIONARY_STACKS,
				       &entry);
		free(locations);
	}
	return (int64_t)id + 1;
}

static void value_type(struct dictionary *dictionary, struct protobuf_message *profile,
		       unsigned field, const char *type, const char *unit)
{
	struct protobuf_message value = {0};

	protobuf_varint_field(&value, VALUE_TYPE_TYPE, (uint64_t)string_index(dictionary, type));
	protobuf_varint_field(&value, VALUE_TYPE_UNIT, (uint64_t)string_index(dictionary, unit));
	protobuf_message_field(profile, field, &value);
}

/* Samples summed by stack and thread name, and when the first and the
 * last of them were taken. */
struct stack_sums {
	struct id_map keys; /* (stack, thread name) */
	int64_t *values;
	size_t capacity;
	uint64_t first, latest;
};

static void add_to_sums(struct stack_sums *sums, const struct profile_sample *sample,
			int64_t amount)
{
	bool added;
	uint32_t key =
	    id_map_get(&sums->keys, sample->stack, (uintptr_t)sample->thread_name, &added);

	grow_array((void **)&sums->values, &sums->capacity, key + 1, sizeof(*sums->values));
	sums->values[key] = added ? amount : sums->values[key] + amount;
	sums->first = sample->time < sums->first ? sample->time : sums->first;
	sums->latest = sample->time > sums->latest ? sample->time : sums->latest;
}

/* Writes the sums as the Profile's samples of TYPE in UNIT, its time (the
 * first sample's, which `wall_clock_offset` turns into Unix time) and
 * duration (to the last sample and `last_period` after it) and its id;
 * frees them. */
static void write_sums(struct dictionary *dictionary, const struct profile *profile,
		       struct stack_sums *sums, const char *type, const char *unit,
		       int64_t wall_clock_offset, uint64_t last_period,
		       struct protobuf_message *out)
{
	struct protobuf_message samples = {0};
	unsigned char id[16] = {0};

	for (size_t key = 0; key < sums->keys.count; key++) {
		struct protobuf_message sample = {0};
		int64_t thread =
		    attribute_index(dictionary, "thread.name",
				    (const char *)(uintptr_t)sums->keys.keys[key].second);

		protobuf_varint_field(&sample, SAMPLE_STACK,
				      (uint64_t)stack_index(dictionary, profile,
							    (uint32_t)sums->keys.keys[key].first));
		protobuf_packed_field(&sample, SAMPLE_ATTRIBUTES, &thread, 1);
		protobuf_packed_field(&sample, SAMPLE_VALUES, &sums->values[key], 1);
		protobuf_message_field(&samples, PROFILE_SAMPLES, &sample);
	}
	value_type(dictionary, out, PROFILE_SAMPLE_TYPE, type, unit);
	protobuf_append(out, &samples);
	if (sums->keys.count) {
		protobuf_fixed64_field(out, PROFILE_TIME,
				       (uint64_t)((int64_t)sums->first + wall_clock_offset));
		protobuf_varint_field(out, PROFILE_DURATION,
				      sums->latest - sums->first + last_period);
	}
	if (getrandom(id, sizeof(id), 0) == (ssize_t)sizeof(id))
		protobuf_bytes_field(out, PROFILE_ID, id, sizeof(id));
	free(sums->values);
	id_map_release(&sums->keys);
}

/* The Profile of process `index`: its samples counted by stack and thread. */
static void write_profile(struct dictionary *dictionary, const struct process_profiles *profiles,
			  size_t index, struct protobuf_message *out)
{
	const struct profile *profile = &profiles->profile;
	const struct process_samples part = process_profiles_samples(profiles, index);
	struct stack_sums sums = {.first = UINT64_MAX};
	uint64_t period = 0;

	for (size_t i = 0; i < part.sample_count; i++) {
		add_to_sums(&sums, &profile->samples[part.samples[i]], 1);
		period = profile->samples[part.samples[i]].period;
	}
	write_sums(dictionary, profile, &sums, "samples", "count", profiles->wall_clock_offset,
		   period, out);
	value_type(dictionary, out, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	protobuf_varint_field(out, PROFILE_PERIOD, period);
}

/* The Profile of `profile`, the runtime events of `kind`, of one of its
 * values (`weight`: the weight, else the count), summed by stack and
 * thread, dated on the CPU samples' clock, which `wall_clock_offset` turns
 * into Unix time. */
static void write_events_profile(struct dictionary *dictionary,
				 const struct runtime_profile *runtime,
				 enum runtime_stack_kind kind, bool weight,
				 int64_t wall_clock_offset, struct protobuf_message *out)
{
	const struct profile *profile = &runtime->profile;
	const struct pprof_values *values = outputs_runtime_values(kind);
	struct stack_sums sums = {.first = UINT64_MAX};

	for (size_t i = 0; i < profile->sample_count; i++)
		add_to_sums(&sums, &profile->samples[i],
			    weight	      ? (int64_t)profile->samples[i].period
			    : runtime->counts ? (int64_t)runtime->counts[i]
					      : 1);
	write_sums(dictionary, profile, &sums, weight ? values->weight_type : values->count_type,
		   weight ? values->weight_unit : values->count_unit, wall_clock_offset, 0, out);
}

/* A Profile of each value of each kind of `runtime` that has events. */
static void write_runtime_profiles(struct dictionary *dictionary,
				   const struct runtime_profile runtime[RUNTIME_STACK_KINDS],
				   int64_t wall_clock_offset,
				   struct protobuf_message *scope_profiles)
{
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++) {
		bool weighed = outputs_runtime_values((enum runtime_stack_kind)kind)->weight_type;

		for (int weight = 0; runtime[kind].profile.sample_count && weight <= weighed;
		     weight++) {
			struct protobuf_message profile = {0};

			write_events_profile(dictionary, &runtime[kind],
					     (enum runtime_stack_kind)kind, weight,
					     wall_clock_offset, &profile);
			protobuf_message_field(scope_profiles, SCOPE_PROFILES_PROFILES, &profile);
		}
	}
}

/* A resource attribute, a string (none when empty). */
static void string_attribute(struct protobuf_message *resource, const char *key, const char *value)
{
	struct protobuf_message pair = {0}, any = {0};

	if (!value || !value[0])
		return;
	protobuf_string_field(&any, ANY_VALUE_STRING, value);
	protobuf_string_field(&pair, KEY_VALUE_KEY, key);
	protobuf_message_field(&pair, KEY_VALUE_VALUE, &any);
	protobuf_message_field(resource, RESOURCE_ATTRIBUTES, &pair);
}

static void int_attribute(struct protobuf_message *resource, const char *key, int64_t value)
{
	struct protobuf_message pair = {0}, any = {0};

	protobuf_varint_field(&any, ANY_VALUE_INT, (uint64_t)value);
	protobuf_string_field(&pair, KEY_VALUE_KEY, key);
	protobuf_message_field(&pair, KEY_VALUE_VALUE, &any);
	protobuf_message_field(resource, RESOURCE_ATTRIBUTES, &pair);
}

static void write_resource_profiles(struct dictionary *dictionary,
				    const struct process_profiles *profiles,
				    const struct otlp_process *process,
				    struct protobuf_message *request)
{
	struct protobuf_message resource = {0}, scope = {0}, scope_profiles = {0}, profile = {0},
				resource_profiles = {0};

	string_attribute(&resource, "service.name", process->service);
	string_attribute(&resource, "k8s.namespace.name", process->namespace);
	string_attribute(&resource, "k8s.pod.name", process->pod);
	string_attribute(&resource, "container.id", process->container);
	int_attribute(&resource, "process.pid", process->pid);
	string_attribute(&resource, "process.executable.name", process->executable);
	protobuf_string_field(&scope, SCOPE_NAME, "profcpu");
	protobuf_string_field(&scope, SCOPE_VERSION, PROFCPU_VERSION);
	protobuf_message_field(&scope_profiles, SCOPE_PROFILES_SCOPE, &scope);
	if (process->index != OTLP_NO_SAMPLES) {
		write_profile(dictionary, profiles, process->index, &profile);
		protobuf_message_field(&scope_profiles, SCOPE_PROFILES_PROFILES, &profile);
	}
	if (process->runtime)
		write_runtime_profiles(dictionary, process->runtime, profiles->wall_clock_offset,
				       &scope_profiles);
	protobuf_message_field(&resource_profiles, RESOURCE_PROFILES_RESOURCE, &resource);
	protobuf_message_field(&resource_profiles, RESOURCE_PROFILES_SCOPES, &scope_profiles);
	protobuf_message_field(request, REQUEST_RESOURCE_PROFILES, &resource_profiles);
}

unsigned char *otlp_profiles_encode(const struct process_profiles *profiles,
				    const struct otlp_process *processes, size_t count,
				    size_t *size)
{
	struct protobuf_message request = {0}, tables = {0};
	struct dictionary dictionary;

	dictionary_init(&dictionary);
	for (size_t i = 0; i < count; i++)
		write_resource_profiles(&dictionary, profiles, &processes[i], &request);
	for (unsigned table = DICTIONARY_MAPPINGS; table <= DICTIONARY_STACKS; table++)
		protobuf_append(&tables, &dictionary.tables[table]);
	protobuf_message_field(&request, REQUEST_DICTIONARY, &tables);
	string_table_free(dictionary.texts);
	id_map_release(&dictionary.strings);
	id_map_release(&dictionary.functions);
	id_map_release(&dictionary.mappings);
	id_map_release(&dictionary.locations);
	id_map_release(&dictionary.attributes);
	id_map_release(&dictionary.stacks);
	*size = request.length;
	return request.bytes;
}

/* `data` gzip-compressed (malloc'd), or NULL when zlib cannot. */
static unsigned char *gzip(const unsigned char *data, size_t size, size_t *length)
{
	z_stream stream = {.next_in = (Bytef *)data, .avail_in = (uInt)size};
	size_t capacity;
	unsigned char *out;

	if (deflateInit2(&stream, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	capacity = deflateBound(&stream, (uLong)size);
	out = xmalloc(capacity);
	stream.next_out = out;
	stream.avail_out = (uInt)capacity;
	if (deflate(&stream, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&stream);
		free(out);
		return NULL;
	}
	*length = stream.total_out;
	deflateEnd(&stream);
	return out;
}

enum push_result otlp_profiles_send(const struct push_target *target, const unsigned char *body,
				    size_t size, double timeout, struct http_connection **keep,
				    char *why, size_t why_size)
{
	static const struct http_header headers[] = {
	    {"OTLP-Profiles-Development-Version", "1"},
	    {"Content-Encoding", "gzip"},
	};
	const char *path = "/v1development/profiles";
	size_t length = strlen(target->url), compressed_size = 0;
	bool given = length >= strlen(path) && !strcmp(target->url + length - strlen(path), path);
	char *url = given ? xstrdup(target->url) : push_target_url(target, path);
	unsigned char *compressed = gzip(body, size, &compressed_size);
	enum push_result result =
	    push_target_post(target,
			     &(struct push_post){.url = url,
						 .content_type = "application/x-protobuf",
						 .body = compressed ? compressed : body,
						 .size = compressed ? compressed_size : size,
						 .extra_headers = headers,
						 .extra_header_count = compressed ? 2 : 1,
						 .timeout = timeout,
						 .keep = keep},
			     why, why_size);

	free(compressed);
	free(url);
	return result;
}
