#include "event_options.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"

/* Keywords of Microsoft-Windows-DotNETRuntime (ClrEtwAll.man). */
enum runtime_keyword {
	KEYWORD_GC = 0x1,
	KEYWORD_LOADER = 0x8,
	KEYWORD_JIT = 0x10,
	KEYWORD_CONTENTION = 0x4000,
	KEYWORD_EXCEPTION = 0x8000,
	KEYWORD_THREADING = 0x10000,
	KEYWORD_GC_HEAP_SURVIVAL_AND_MOVEMENT = 0x400000,
	KEYWORD_WAIT_HANDLE = 0x40000000000,	     /* .NET 9: WaitHandleWaitStart/Stop */
	KEYWORD_ALLOCATION_SAMPLING = 0x80000000000, /* .NET 10: AllocationSampled */
};

/* The level is the provider's, so a Verbose set makes every set verbose:
 * method loads (jit), allocation ticks (alloc) and wait-handle waits
 * (waits) are Verbose events. */
static const struct {
	const char *name;
	uint64_t keywords;
	uint32_t level;
} named_sets[] = {
    {"gc", KEYWORD_GC, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"alloc", KEYWORD_GC, EVENTPIPE_LEVEL_VERBOSE},
    {"allocsampled", KEYWORD_ALLOCATION_SAMPLING, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"jit", KEYWORD_JIT, EVENTPIPE_LEVEL_VERBOSE},
    {"loader", KEYWORD_LOADER, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"exceptions", KEYWORD_EXCEPTION, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"exception", KEYWORD_EXCEPTION, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"contention", KEYWORD_CONTENTION, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"threading", KEYWORD_THREADING, EVENTPIPE_LEVEL_INFORMATIONAL},
    {"waits", KEYWORD_WAIT_HANDLE, EVENTPIPE_LEVEL_VERBOSE},
};

static void add_provider(struct eventpipe_config *config, const char *name, uint64_t keywords,
			 uint32_t level)
{
	for (size_t i = 0; i < config->provider_count; i++)
		if (!strcasecmp(config->providers[i].name, name)) {
			config->providers[i].keywords |= keywords;
			if (level > config->providers[i].level)
				config->providers[i].level = level;
			return;
		}
	config->providers[config->provider_count] =
	    (struct eventpipe_provider){.keywords = keywords, .level = level};
	snprintf(config->providers[config->provider_count++].name, sizeof(config->providers->name),
		 "%s", name);
}

/* One item of -events, modified in place: a named set, or
 * Provider:0xKEYWORDS[:LEVEL]. */
static int add_event_item(struct eventpipe_config *config, char *item)
{
	char *keywords_text = strchr(item, ':'), *level_text, *end;
	unsigned long long keywords;
	unsigned long level = EVENTPIPE_LEVEL_INFORMATIONAL;

	if (!keywords_text) {
		for (size_t i = 0; i < sizeof(named_sets) / sizeof(*named_sets); i++)
			if (!strcasecmp(item, named_sets[i].name)) {
				add_provider(config, RUNTIME_PROVIDER, named_sets[i].keywords,
					     named_sets[i].level);
				return 0;
			}
		report_error("unknown -events item '%s': give gc, alloc, allocsampled, jit, "
			     "loader, exceptions, contention, threading, waits or "
			     "Provider:0xKEYWORDS[:LEVEL]",
			     item);
		return -1;
	}
	*keywords_text++ = '\0';
	if ((level_text = strchr(keywords_text, ':')))
		*level_text++ = '\0';
	errno = 0;
	keywords = strtoull(keywords_text, &end, 0);
	if (errno || end == keywords_text || *end || !*item ||
	    (level_text && ((level = strtoul(level_text, &end, 0)) > 5 || *end || !*level_text))) {
		report_error("invalid -events item '%s:%s%s%s': give Provider:0xKEYWORDS[:LEVEL], "
			     "LEVEL 0 to 5",
			     item, keywords_text, level_text ? ":" : "",
			     level_text ? level_text : "");
		return -1;
	}
	if (strlen(item) >= sizeof(config->providers->name) ||
	    config->provider_count == EVENTPIPE_MAX_PROVIDERS) {
		report_error("-events: at most %d providers, names shorter than %zu characters",
			     EVENTPIPE_MAX_PROVIDERS, sizeof(config->providers->name));
		return -1;
	}
	add_provider(config, item, keywords, (uint32_t)level);
	return 0;
}

/* -events LIST replaces the default set. */
static int add_event_list(struct eventpipe_config *config, const char *list)
{
	char *copy = xstrdup(list), *item, *rest;
	int status = 0;

	for (item = strtok_r(copy, ",", &rest); item && status == 0;
	     item = strtok_r(NULL, ",", &rest))
		status = add_event_item(config, item);
	free(copy);
	if (status < 0)
		return -1;
	if (!config->provider_count) {
		report_error("-events needs a list: gc, alloc, allocsampled, jit, loader, "
			     "exceptions, contention, threading, waits or "
			     "Provider:0xKEYWORDS[:LEVEL]");
		return -1;
	}
	return 0;
}

static int count_set(const struct event_options *options)
{
	return options->gc_collect_only + options->gc_only + options->gc_with_heap +
	       (options->events != NULL);
}

int event_options_config(const struct event_options *options, struct eventpipe_config *config)
{
	*config = (struct eventpipe_config){.rundown = true};
	if (count_set(options) > 1) {
		report_error("-gccollectonly, -gconly, -gcwithheap and -events choose the events: "
			     "give one of them");
		return -1;
	}
	if (options->no_events && options->no_samples) {
		report_error("-nolttng and -noperf together leave nothing to record: give one");
		return -1;
	}
	if (options->no_events) {
		if (count_set(options))
			report_warning("-nolttng: no runtime events are recorded, whatever the "
				       "other event options say");
		return 0;
	}
	if (options->events)
		return add_event_list(config, options->events) < 0 ? -1 : 1;
	if (options->gc_collect_only) {
		/* GCStart/End, suspension and heap statistics are Informational;
		 * allocation ticks and joins are Verbose. No rundown: GC only. */
		add_provider(config, RUNTIME_PROVIDER, KEYWORD_GC, EVENTPIPE_LEVEL_INFORMATIONAL);
		config->rundown = false;
	} else if (options->gc_only || options->gc_with_heap) {
		add_provider(
		    config, RUNTIME_PROVIDER,
		    KEYWORD_GC | KEYWORD_JIT | KEYWORD_LOADER | KEYWORD_EXCEPTION |
			(options->gc_with_heap ? KEYWORD_GC_HEAP_SURVIVAL_AND_MOVEMENT : 0),
		    EVENTPIPE_LEVEL_VERBOSE);
		if (options->gc_with_heap)
			report_warning("-gcwithheap: every GC reports each block of the heap it "
				       "keeps or moves; expect each GC pause to last more than "
				       "twice as long and the trace to grow with the live heap");
	} else {
		add_provider(config, RUNTIME_PROVIDER,
			     KEYWORD_GC | KEYWORD_LOADER | KEYWORD_JIT | KEYWORD_CONTENTION |
				 KEYWORD_EXCEPTION | KEYWORD_THREADING,
			     EVENTPIPE_LEVEL_INFORMATIONAL);
	}
	return 1;
}
