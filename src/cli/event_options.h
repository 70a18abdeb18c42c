/* perfcollect's event options, mapped onto EventPipe providers and
 * keywords of the .NET runtime: which runtime events collect records beside
 * the samples, or instead of them. */
#ifndef PROFCPU_EVENT_OPTIONS_H
#define PROFCPU_EVENT_OPTIONS_H

#include "eventpipe_session.h"
#include "options.h"

#include <stdbool.h>
#include <stdio.h>

struct event_options {
	bool gc_collect_only, gc_only, gc_with_heap;
	bool no_events;	    /* -nolttng: samples only */
	bool no_samples;    /* -noperf: events only */
	const char *events; /* -events LIST */
};

#define EVENT_OPTION_ENTRIES(event_options)                                                        \
	{"gccollectonly", NULL, OPTION_FLAG, &(event_options)->gc_collect_only},                   \
	    {"gconly", NULL, OPTION_FLAG, &(event_options)->gc_only},                              \
	    {"gcwithheap", NULL, OPTION_FLAG, &(event_options)->gc_with_heap},                     \
	    {"nolttng", "noevents", OPTION_FLAG, &(event_options)->no_events},                     \
	    {"noperf", NULL, OPTION_FLAG, &(event_options)->no_samples},                           \
	{                                                                                          \
		"events", NULL, OPTION_STRING, &(event_options)->events                            \
	}

#define EVENT_OPTIONS_USAGE                                                                        \
	"runtime events (.NET targets, through EventPipe; written to runtime.nettrace):\n"         \
	"  (default)             GC (collections, pauses, heap sizes), exceptions, lock\n"         \
	"                        contention, thread pool, JIT and loader, with the\n"              \
	"                        method rundown at the end\n"                                      \
	"  -gccollectonly        GC collections and pauses only: the cheapest\n"                   \
	"  -gconly               verbose GC (allocation ticks, joins) with JIT, loader\n"          \
	"                        and exceptions\n"                                                 \
	"  -gcwithheap           -gconly and heap survival and movement: every GC reports\n"       \
	"                        each block it keeps or moves, which can make each GC\n"           \
	"                        pause more than twice as long\n"                                  \
	"  -events LIST          only these, comma-separated: gc, alloc (GC with its\n"            \
	"                        allocation ticks: alloc_* profiles), allocsampled\n"              \
	"                        (.NET 10's randomized allocation samples instead),\n"             \
	"                        jit, loader, exceptions, contention, threading,\n"                \
	"                        waits (.NET 9: waits on wait handles, waits_*\n"                  \
	"                        profiles), or\n"                                                  \
	"                        Provider:0xKEYWORDS[:LEVEL] for any EventSource\n"                \
	"  -nolttng, -noevents   no runtime events: samples only\n"                                \
	"  -noperf               runtime events only: no samples\n"

/* Checks the combination and fills `config`. Returns 1 when events are
 * wanted, 0 when not (-nolttng), or -1 after a one-line error. Warns about
 * the cost of -gcwithheap. */
int event_options_config(const struct event_options *options, struct eventpipe_config *config);

#endif
