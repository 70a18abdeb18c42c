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
 * module after its methods). */
struct pending_method {
	uint64_t module_id, start, size, time;
	bool unload;
	char *name; /* "Namespace.Type::Method(PARAMETERS)[Tier]", NULL to unload */
	char *return_type;
};

struct module {
	uint64_t id;
	char *assembly; /* the file's name without its folder and ".dll" */
};

struct reading {
	struct nettrace_info info;
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
static uint64_t to_nanoseconds(const struct reading *reading, uint64_t ticks)
{
	uint64_t per_second = reading->info.ticks_per_second;

	if (per_second == 1000000000 || per_second == 0)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / per_second);
}

static void keep_method(struct reading *reading, const struct nettrace_event *event, bool unload)
{
	struct runtime_method method;
	struct pending_method *kept;
	const char *tier, *parameters;

	if (reading->method_count == MAX_METHODS || !runtime_method_parse(event, &method))
		return;
	grow_array((void **)&reading->methods, &reading->method_capacity, reading->method_count + 1,
		   sizeof(*reading->methods));
	kept = &reading->methods[reading->method_count++];
	*kept = (struct pending_method){.module_id = method.module_id,
					.start = method.start,
					.size = method.size,
					.time = to_nanoseconds(reading, event->timestamp),
					.unload = unload};
	if (unload)
		return;
	/* The signature reads "RETURN  (PARAMETERS)", as the perf map's. */
	tier = tier_names[(method.flags >> TIER_SHIFT) & TIER_MASK];
	parameters = strchr(method.signature, '(');
	kept->name = xasprintf("%s::%s%s%s%s%s", method.namespace_name, method.method_name,
			       parameters ? parameters : "()", tier ? "[" : "", tier ? tier : "",
			       tier ? "]" : "");
	if (parameters) {
		size_t length = (size_t)(parameters - method.signature);

		while (length && method.signature[length - 1] == ' ')
			length--;
		kept->return_type = xasprintf("%.*s", (int)length, method.signature);
	}
}

/* ModuleLoad and ModuleDCEnd: ModuleID, AssemblyID, ModuleFlags (u32),
 * Reserved1 (u32), then the module's path. */
static void keep_module(struct reading *reading, const struct nettrace_event *event)
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

static void on_event(const struct nettrace_event *event, void *context)
{
	struct reading *reading = context;

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

static const char *assembly_of(const struct reading *reading, uint64_t module_id)
{
	for (size_t i = reading->module_count; i-- > 0;)
		if (reading->modules[i].id == module_id)
			return reading->modules[i].assembly;
	return NULL;
}

/* "RETURN [Assembly] Namespace.Type::Method(PARAMETERS)[Tier]" */
static void add_method(struct code_ranges *ranges, const struct reading *reading,
		       const struct pending_method *method)
{
	const char *assembly = assembly_of(reading, method->module_id);
	char *name;

	if (method->unload) {
		code_ranges_remove(ranges, method->start, method->size, method->time);
		return;
	}
	name = xasprintf("%s%s[%s] %s", method->return_type ? method->return_type : "",
			 method->return_type && *method->return_type ? " " : "",
			 assembly ? assembly : "unknown", method->name);
	code_ranges_add(ranges, method->start, method->size, method->time, name, strlen(name));
	free(name);
}

static void release_reading(struct reading *reading)
{
	for (size_t i = 0; i < reading->method_count; i++) {
		free(reading->methods[i].name);
		free(reading->methods[i].return_type);
	}
	for (size_t i = 0; i < reading->module_count; i++)
		free(reading->modules[i].assembly);
	free(reading->methods);
	free(reading->modules);
}

struct code_ranges *runtime_methods_parse(const uint8_t *data, size_t size, uint32_t *process_id,
					  char *why, size_t why_size)
{
	struct reading reading = {0};
	struct code_ranges *ranges = NULL;

	/* Damage after the rundown's start still leaves the methods before it. */
	if (nettrace_parse(data, size, &reading.info, on_event, &reading, why, why_size) < 0 &&
	    !reading.method_count) {
		release_reading(&reading);
		return NULL;
	}
	if (reading.method_count == 0) {
		snprintf(why, why_size, "it holds no method events (no rundown)");
	} else {
		ranges = code_ranges_new();
		if (!ranges)
			abort();
		for (size_t i = 0; i < reading.method_count; i++)
			add_method(ranges, &reading, &reading.methods[i]);
		*process_id = reading.info.process_id;
	}
	release_reading(&reading);
	return ranges;
}

struct file_reading {
	struct code_ranges *ranges;
	uint32_t *process_id;
};

static int parse_file(const uint8_t *data, size_t size, void *context, char *why, size_t why_size)
{
	struct file_reading *reading = context;

	reading->ranges = runtime_methods_parse(data, size, reading->process_id, why, why_size);
	return reading->ranges ? 0 : -1;
}

struct code_ranges *runtime_methods_read(const char *path, uint32_t *process_id, char *why,
					 size_t why_size)
{
	struct file_reading reading = {NULL, process_id};

	nettrace_map_file(path, parse_file, &reading, why, why_size);
	return reading.ranges;
}
