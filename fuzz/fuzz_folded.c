/* Folded stacks into a flame graph, then the graph written back as folded
 * text and as an SVG, as `profcpu flamegraph` does. */
#include "flamegraph.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flamegraph *graph =
	    flamegraph_new(size && data[0] & 1 ? FLAMEGRAPH_CHART : FLAMEGRAPH_MERGED);
	FILE *in = fmemopen((void *)data, size, "r");
	struct flamegraph_options options = {0};

	if (in) {
		flamegraph_read_folded(graph, in, FOLDED_ONE_OR_TWO, NULL);
		fclose(in);
		flamegraph_write_folded(graph, fuzz_null_output());
		flamegraph_write_svg(graph, &options, fuzz_null_output());
	}
	flamegraph_free(graph);
	return 0;
}
