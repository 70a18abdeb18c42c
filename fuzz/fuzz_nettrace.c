/* libFuzzer entry point for the nettrace reader, the runtime-events
 * summary and the JIT code names built on it: any bytes, as a
 * runtime.nettrace from a hostile or broken process, or a zip someone sent,
 * would give them. */
#include "runtime_events.h"
#include "runtime_methods.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runtime_events events;
	uint32_t process_id;
	char why[160];
	FILE *null = fopen("/dev/null", "w");

	runtime_events_parse(data, size, &events, why, sizeof(why));
	if (null) {
		runtime_events_print(&events, null);
		fclose(null);
	}
	runtime_events_release(&events);
	code_ranges_free(runtime_methods_parse(data, size, &process_id, why, sizeof(why)));
	return 0;
}
