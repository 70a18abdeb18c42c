#include "agent_memory_names.h"
#include "agent_processes.h"
#include "runtime_code_cache.h"
#include "util.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

void agent_memory_names_start_period(struct agent_memory_names *names, double seconds)
{
	lookup_budget_init(&names->budget, seconds, AGENT_MEMORY_NAMES_SHARE,
			   AGENT_MEMORY_NAMES_WALL_SHARE);
	names->lookups = names->named = names->put_off = 0;
}

bool agent_memory_names_name(void *context, pid_t pid, uint64_t address, uint64_t time,
			     struct code_range *found)
{
	struct agent_memory_names *names = context;
	struct runtime_code_cache *cache = agent_processes_memory_code(names->processes, pid);
	uint64_t now;
	struct runtime_code code;
	enum runtime_code_read read;

	if (!cache || address < 4096)
		return false;
	now = clock_nanoseconds(CLOCK_MONOTONIC);
	if (runtime_code_cache_no_code(cache, address, now))
		return false;
	/* A dynamic method's code may be another's since it was read: read
	 * again (the replay asks once a period). */
	if (!runtime_code_cache_known(cache, address, now, false, &code)) {
		read = runtime_code_cache_read(cache, address, now, &names->budget, &code);
		names->lookups += read != RUNTIME_CODE_PUT_OFF;
		names->put_off += read == RUNTIME_CODE_PUT_OFF || read == RUNTIME_CODE_STOPPED;
		if (read != RUNTIME_CODE_FOUND)
			return false;
		runtime_code_cache_keep(cache, &code, now);
	}
	names->named++;
	*found = (struct code_range){.start = code.start,
				     .size = code.end - code.start,
				     .time = time,
				     .valid_until = UINT64_MAX,
				     .name = code.name};
	return true;
}

void agent_memory_names_report(const struct agent_memory_names *names, FILE *log)
{
	if (!names->lookups && !names->put_off)
		return;
	fprintf(log,
		"names from the runtimes' memory: %" PRIu64 " lookups in %.1f ms of CPU, %" PRIu64
		" addresses named, %" PRIu64 " left unnamed for the time budget\n",
		names->lookups, (double)lookup_budget_cpu_spent(&names->budget) / 1e6, names->named,
		names->put_off);
}
