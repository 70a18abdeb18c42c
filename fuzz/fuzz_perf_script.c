/* The reader of `perf script` text (perf.data.txt), as view uses it. */
#include "fuzz_input.h"
#include "perf_script_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count_frames(const struct perf_script_sample *sample, void *context)
{
	size_t *frames = context;

	*frames += sample->frame_count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fmemopen((void *)data, size, "r");
	char error[256];
	size_t frames = 0;

	if (!in)
		return 0;
	perf_script_read(in, count_frames, &frames, error, sizeof(error));
	fclose(in);
	return 0;
}
