/* Two loops on their own lines in one function, the first doing twice the
 * work of the second: two thirds of the time on one line, a third on the
 * other (source_lines.sh). Runs for argv[1] seconds (default: until
 * killed). */
#include <stdlib.h>
#include <time.h>

#define UNIT 100000 /* loop iterations in one unit of work */

static volatile unsigned long sink;

/* Each loop whole on one line, so all of its time is on that line. */
// clang-format off
__attribute__((noinline)) static void two_loops(void)
{
	for (unsigned long i = 0; i < 2 * UNIT; i++) sink += i; /* TWO THIRDS */
	for (unsigned long i = 0; i < UNIT; i++) sink += i; /* ONE THIRD */
}
// clang-format on

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, end = now() + seconds;

	while (seconds <= 0 || now() < end)
		two_loops();
	return 0;
}
