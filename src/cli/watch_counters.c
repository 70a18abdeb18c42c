#include "watch_counters.h"
#include "nettrace.h"

#include <math.h>
#include <string.h>

#define COUNTERS_PROVIDER "System.Runtime"

struct eventpipe_provider watch_counters_provider(void)
{
	/* The counters are sent at any keyword and level; the filter asks
	 * for them and sets their interval. */
	struct eventpipe_provider provider = {.name = COUNTERS_PROVIDER,
					      .keywords = UINT64_MAX,
					      .level = EVENTPIPE_LEVEL_INFORMATIONAL,
					      .filter = "EventCounterIntervalSec=1"};
	return provider;
}

struct counter_search {
	const char *name;
	double highest;
	bool found;
};

/* An EventCounters event's payload is its counter's fields in order: Name
 * and DisplayName (UTF-16 strings), then for a mean counter Mean (a
 * double); an incrementing counter has DisplayRateTimeScale there, and
 * names no mean counter. */
static void take_counter(const struct nettrace_event *event, void *context)
{
	struct counter_search *search = context;
	const uint8_t *payload = event->payload;
	size_t remaining = event->payload_size;
	char name[64], display_name[128];
	double mean;

	if (strcmp(event->provider, COUNTERS_PROVIDER) != 0 ||
	    strcmp(event->name, "EventCounters") != 0 ||
	    !nettrace_read_string(&payload, &remaining, name, sizeof(name)) ||
	    strcmp(name, search->name) != 0 ||
	    !nettrace_read_string(&payload, &remaining, display_name, sizeof(display_name)) ||
	    remaining < sizeof(mean))
		return;
	memcpy(&mean, payload, sizeof(mean));
	if (!isfinite(mean))
		return; /* a hostile or damaged payload */
	if (!search->found || mean > search->highest)
		search->highest = mean;
	search->found = true;
}

static int search_trace(const uint8_t *data, size_t size, void *context, char *why, size_t why_size)
{
	struct nettrace_info info;

	return nettrace_parse(data, size, &info, take_counter, context, why, why_size);
}

bool watch_counters_highest(const char *path, const char *name, double *highest)
{
	struct counter_search search = {.name = name};
	char why[160];

	nettrace_map_file(path, search_trace, &search, why, sizeof(why));
	*highest = search.highest;
	return search.found;
}
