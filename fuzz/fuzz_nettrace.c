/* libFuzzer entry point for the nettrace reader, the runtime-events
 * summary, the events with stacks (runtime_stacks.h) and the JIT code
 * names built on it: any bytes, as a runtime.nettrace from a hostile or
 * broken process, or a zip someone sent, would give them. */
#include "runtime_trace.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runtime_trace trace;
	FILE *null = fopen("/dev/null", "w");

	runtime_trace_parse(data, size, &trace);
	if (null) {
		runtime_events_print(&trace.events, null);
		fclose(null);
	}
	runtime_trace_release(&trace);
	return 0;
}
