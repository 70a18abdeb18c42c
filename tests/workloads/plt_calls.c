/* Calls a library function through the PLT in a loop. Under LD_BIND_NOT=1
 * the dynamic loader resolves every such call anew (_dl_runtime_resolve,
 * which keeps its CFA in rbx, then _dl_fixup): most samples are in ld.so,
 * below a frame only rbx carried across frames unwinds. Built without frame
 * pointers. Runs for argv[1] seconds. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noipa)) static void call_through_plt(void)
{
	for (int i = 0; i < 1000; i++)
		sink += strtoul("12345", NULL, 10);
}

__attribute__((noipa)) static void worker(double end)
{
	struct timespec t;

	do {
		call_through_plt();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < end);
}

int main(int argc, char **argv)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	worker((double)t.tv_sec + (double)t.tv_nsec / 1e9 + (argc > 1 ? atof(argv[1]) : 1e9));
	return 0;
}
