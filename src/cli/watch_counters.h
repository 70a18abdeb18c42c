/* The runtime's counters as a watched .NET process's EventPipe session
 * carries them: System.Runtime's EventCounters events, asked for once a
 * second (watch_counters_provider), each a counter's name and its value
 * over the interval. */
#ifndef PROFCPU_WATCH_COUNTERS_H
#define PROFCPU_WATCH_COUNTERS_H

#include "eventpipe_session.h"

#include <stdbool.h>

/* The provider that sends System.Runtime's counters every second. */
struct eventpipe_provider watch_counters_provider(void);

/* The highest mean of the counter `name` (a mean counter of System.Runtime,
 * e.g. threadpool-queue-length) in the nettrace at `path` into `*highest`.
 * Returns false when the trace holds none of its values (or cannot be
 * read). */
bool watch_counters_highest(const char *path, const char *name, double *highest);

#endif
