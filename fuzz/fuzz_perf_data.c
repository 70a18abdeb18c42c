/* A perf.data through the whole replay (records in time order, side
 * records, callchains, symbols from the files its mappings name), then the
 * folded and perf-script outputs, as postprocess does. */
#include "emit.h"
#include "fuzz_input.h"
#include "replay.h"
#include "util.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One resolver for the whole run, as one long postprocess has: the
	 * kernel's symbols (/proc/kallsyms) are read once, not per input. */
	static struct resolver *resolver;
	struct resolver_config config = {.native = {.target_root_fd = -1}};
	struct profile profile;
	char path[32];
	int fd = fuzz_input_file(data, size, path);

	if (!resolver)
		resolver = resolver_new(&config);
	profile_init(&profile);
	if (replay_capture(path, resolver, &profile) == 0) {
		struct folded_profile folded;

		profile_fold(&profile, &(struct fold_options){0}, &folded);
		emit_folded(&folded, fuzz_null_output());
		emit_perf_script(&profile, true, fuzz_null_output());
		folded_profile_release(&folded);
	}
	profile_release(&profile);
	close(fd);
	return 0;
}
