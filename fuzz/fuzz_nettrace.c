/* libFuzzer entry point for the nettrace reader and the runtime-events
 * summary built on it: any bytes, as a runtime.nettrace from a hostile or
 * broken process, or a zip someone sent, would give them. Not wired into
 * the build; to run it by hand:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *       -Isrc -Isrc/profile fuzz/fuzz_nettrace.c src/profile/nettrace.c \
 *       src/profile/runtime_events.c src/util.c -o fuzz_nettrace
 *   ./fuzz_nettrace -max_len=65536 CORPUS_DIR    # a real runtime.nettrace as seed
 */
#include "runtime_events.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
