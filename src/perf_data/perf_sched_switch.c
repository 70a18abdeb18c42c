/* The fields of the one tracepoint profcpu records, sched:sched_switch. */
#include "perf_data.h"

#include <string.h>

bool perf_sched_switch_parse(const uint8_t *raw, size_t size, struct perf_sched_switch *fields)
{
	/* common fields (8 bytes), prev_comm[16], prev_pid, prev_prio,
	 * long prev_state, next_comm[16], next_pid, next_prio: 64 bytes. */
	if (!raw || size < 64)
		return false;
	memcpy(fields->prev_comm, raw + 8, 15);
	fields->prev_comm[15] = '\0';
	memcpy(&fields->prev_pid, raw + 24, 4);
	memcpy(&fields->prev_prio, raw + 28, 4);
	memcpy(&fields->prev_state, raw + 32, 8);
	memcpy(fields->next_comm, raw + 40, 15);
	fields->next_comm[15] = '\0';
	memcpy(&fields->next_pid, raw + 56, 4);
	memcpy(&fields->next_prio, raw + 60, 4);
	return true;
}
