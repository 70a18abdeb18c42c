/* libFuzzer entry point for the nettrace reader and the runtime-events
 * summary built on it: any bytes, as a runtime.nettrace from a hostile or
 * broken process, or a zip someone sent, would give them. */
#include "runtime_events.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runtime_events events;
	char why[160];
	FILE *null = fopen("/dev/null", "w");

	runtime_events_parse(data, size, &events, why, sizeof(why));
	if (null) {
		runtime_events_print(&events, null);
		fclose(null);
	}
	runtime_events_release(&events);
	return 0;
}
