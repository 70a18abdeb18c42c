#include "runtime_methods.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"
/* Bounds on what a hostile trace can make this keep. */
#define MAX_METHODS 1000000
#define MAX_MODULES 65536

/* Event ids (ClrEtwAll.man); the two providers number them apart. */
enum {
	RUNTIME_METHOD_LOAD_VERBOSE = 143,
	RUNTIME_METHOD_UNLOAD_VERBOSE = 144,
	RUNTIME_MODULE_LOAD = 152,
	RUNDOWN_METHOD_DC_END_VERBOSE = 144,
	RUNDOWN_MODULE_DC_END = 154,
};

/* MethodFlags carry the code's optimization tier in bits 7 to 9, numbered
 * as the runtime's JitOptimizationTier, whose names its perf map prints. */
#define TIER_SHIFT 7
#define TIER_MASK  0x7
static const char *const tier_names[] = {
    NULL,
    "MinOptJitted",
    "Optimized",
    "QuickJitted",
    "OptimizedTier1",
    "OptimizedTier1OSR",
    "InstrumentedTier",
    "InstrumentedTierOptimized",
};

/* A method event kept until the modules are known (the rundown names a
 * module after its methods); its strings are read from the event's payload,
 * which stays in the caller's bytes until the reading is finished. */
struct pending_method {
	uint64_t time;
	bool unload;
	const uint8_t *payload;
	size_t payload_size;
};

struct module {
	uint64_t id;
	char *assembly; /* the file's name without its folder and ".dll" */
};

struct runtime_methods_reading {
	const struct nettrace_info *info;
	struct pending_method *methods;
	size_t method_count, method_capacity;
	struct module *modules;
	size_t module_count, module_capacity;
};

static uint64_t payload_u64(const struct nettrace_event *event, size_t offset)
{
	uint64_t value = 0;

	if (offset + 8 <= event->payload_size)
		memcpy(&value, event->payload + offset, 8);
	return value;
}

bool runtime_method_parse(const struct nettrace_event *event, struct runtime_method *method)
{
	/* MethodID, ModuleID, MethodStartAddress, MethodSize (u32),
	 * MethodToken (u32), MethodFlags (u32), then three strings. */
	const uint8_t *strings = event->payload + 36;
	size_t remaining = event->payload_size > 36 ? event->payload_size - 36 : 0;

	if (remaining == 0)
		return false;
	method->module_id = payload_u64(event, 8);
	method->start = payload_u64(event, 16);
	method->size = (uint32_t)payload_u64(event, 24);
	memcpy(&method->flags, event->payload + 32, 4);
	return nettrace_read_string(&strings, &remaining, method->namespace_name,
				    sizeof(method->namespace_name)) &&
	       nettrace_read_string(&strings, &remaining, method->method_name,
				    sizeof(method->method_name)) &&
	       nettrace_read_string(&strings, &remaining, method->signature,
				    sizeof(method->signature));
}

/* Nanoseconds of CLOCK_MONOTONIC, the clock of the runtime's timestamps on
 * Linux (QueryPerformanceCounter) and of the samples. */
static uint64_t to_nanoseconds(const struct runtime_methods_reading *reading, uint64_t ticks)
{
	uint64_t per_second = reading->info->ticks_per_second;

	if (per_second == 1000000000 || per_second == 0)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / per_second);
}

static void keep_method(struct runtime_methods_reading *reading, const struct nettrace_event *event,
			bool unload)
{
	if (reading->method_count == MAX_METHODS || event->payload_size <= 36)
		return;
	grow_array((void **)&reading->methods, &reading->method_capacity, reading->method_count + 1,
		   sizeof(*reading->methods));
	reading->methods[reading->method_count++] =
	    (struct pending_method){.time = to_nanoseconds(reading, event->timestamp),
				    .unload = unload,
				    .payload = event->payload,
				    .payload_size = event->payload_size};
}

/* ModuleLoad and ModuleDCEnd: ModuleID, AssemblyID, ModuleFlags (u32),
 * Reserved1 (u32), then the module's path. */
static void keep_module(struct runtime_methods_reading *reading, const struct nettrace_event *event)
{
	const uint8_t *strings = event->payload + 24;
	size_t remaining = event->payload_size > 24 ? event->payload_size - 24 : 0;
	char path[1024], *name, *extension;

	if (reading->module_count == MAX_MODULES ||
	    !nettrace_read_string(&strings, &remaining, path, sizeof(path)))
		return;
	name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	extension = strrchr(name, '.');
	if (extension && (!strcmp(extension, ".dll") || !strcmp(extension, ".exe")))
		*extension = '\0';
	grow_array((void **)&reading->modules, &reading->module_capacity, reading->module_count + 1,
		   sizeof(*reading->modules));
	reading->modules[reading->module_count++] =
	    (struct module){payload_u64(event, 0), xstrdup(name)};
}

void runtime_methods_reading_take(struct runtime_methods_reading *reading,
				  const struct nettrace_event *event)
{

	if (!strcmp(event->provider, RUNTIME_PROVIDER)) {
		if (event->id == RUNTIME_METHOD_LOAD_VERBOSE ||
		    event->id == RUNTIME_METHOD_UNLOAD_VERBOSE)
			keep_method(reading, event, event->id == RUNTIME_METHOD_UNLOAD_VERBOSE);
		else if (event->id == RUNTIME_MODULE_LOAD)
			keep_module(reading, event);
	} else if (!strcmp(event->provider, RUNDOWN_PROVIDER)) {
		if (event->id == RUNDOWN_METHOD_DC_END_VERBOSE)
			keep_method(reading, event, false);
		else if (event->id == RUNDOWN_MODULE_DC_END)
			keep_module(reading, event);
	}
}

static const char *assembly_of(const struct runtime_methods_reading *reading, uint64_t module_id)
{
	for (size_t i = reading->module_count; i-- > 0;)
		if (reading->modules[i].id == module_id)
			return reading->modules[i].assembly;
	return NULL;
}

/* A name built piece by piece (snprintf's format parsing cost more than
 * the copying, 16,000 times a capture); pieces past its room are cut. */
struct name_builder {
	char bytes[4096]; /* room for the longest strings runtime_method_parse keeps */
	size_t length;
};

static void append(struct name_builder *name, const char *text, size_t length)
{
	size_t room = sizeof(name->bytes) - name->length;

	memcpy(name->bytes + name->length, text, length < room ? length : room);
	name->length += length < room ? length : room;
}

static void append_string(struct name_builder *name, const char *text)
{
	append(name, text, strlen(text));
}

/* "RETURN [Assembly] Namespace.Type::Method(PARAMETERS)[Tier]", as the
 * perf map names code. */
static bool add_method(struct code_ranges *ranges, const struct runtime_methods_reading *reading,
		       const struct pending_method *pending)
{
	struct nettrace_event event = {.payload = pending->payload,
				       .payload_size = pending->payload_size};
	struct runtime_method method;
	struct name_builder name = {.length = 0};
	const char *assembly, *tier, *parameters;
	size_t return_length = 0;

	if (!runtime_method_parse(&event, &method))
		return false;
	if (pending->unload)
		return code_ranges_remove(ranges, method.start, method.size, pending->time);
	/* The signature reads "RETURN  (PARAMETERS)", as the perf map's. */
	assembly = assembly_of(reading, method.module_id);
	tier = tier_names[(method.flags >> TIER_SHIFT) & TIER_MASK];
	parameters = strchr(method.signature, '(');
	if (parameters) {
		return_length = (size_t)(parameters - method.signature);
		while (return_length && method.signature[return_length - 1] == ' ')
			return_length--;
	}
	append(&name, method.signature, return_length);
	if (return_length)
		append(&name, " ", 1);
	append(&name, "[", 1);
	append_string(&name, assembly ? assembly : "unknown");
	append(&name, "] ", 2);
	append_string(&name, method.namespace_name);
	append(&name, "::", 2);
	append_string(&name, method.method_name);
	append_string(&name, parameters ? parameters : "()");
	if (tier) {
		append(&name, "[", 1);
		append_string(&name, tier);
		append(&name, "]", 1);
	}
	return code_ranges_add(ranges, method.start, method.size, pending->time, name.bytes,
			       name.length);
}

static void release_reading(struct runtime_methods_reading *reading)
{
	for (size_t i = 0; i < reading->module_count; i++)
		free(reading->modules[i].assembly);
	free(reading->methods);
	free(reading->modules);
	free(reading);
}

struct runtime_methods_reading *runtime_methods_reading_start(const struct nettrace_info *info)
{
	struct runtime_methods_reading *reading = xcalloc(1, sizeof(*reading));

	reading->info = info;
	return reading;
}

struct code_ranges *runtime_methods_reading_finish(struct runtime_methods_reading *reading,
						   uint32_t *process_id, char *why, size_t why_size)
{
	struct code_ranges *ranges = code_ranges_new();
	size_t added = 0;

	if (!ranges)
		abort();
	for (size_t i = 0; i < reading->method_count; i++)
		added += add_method(ranges, reading, &reading->methods[i]);
	if (added) {
		*process_id = reading->info->process_id;
	} else {
		snprintf(why, why_size, "it holds no method events (no rundown)");
		code_ranges_free(ranges);
		ranges = NULL;
	}
	release_reading(reading);
	return ranges;
}
