/* A call tree six calls deep, built -O2 -fomit-frame-pointer: no function
 * keeps a frame pointer, so rbp chains are useless and only call frame
 * information finds the callers. Two threads (main and one more) each run
 *
 *   worker -> stage_one -> stage_two -> stage_three -> hot_a -> spin   3 units
 *                                                   -> hot_b -> spin   1 unit
 *
 * so hot_a holds 3/4 of spin's time. Runs for argv[1] seconds (default:
 * until killed). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_UNIT 2000000 /* spin iterations in one unit */

static double seconds = 0;

/* noipa: no inlining, cloning or merging, so each function keeps its name
 * and its own call; the "+ 1" after each call keeps it from being a jump. */
__attribute__((noipa)) unsigned long spin(unsigned long count)
{
	unsigned long hash = count;

	for (unsigned long i = 0; i < count; i++)
		hash = hash * 6364136223846793005UL + i;
	return hash;
}

__attribute__((noipa)) unsigned long hot_a(void)
{
	return spin(3 * SPIN_UNIT) + 1;
}

__attribute__((noipa)) unsigned long hot_b(void)
{
	return spin(SPIN_UNIT) + 1;
}

__attribute__((noipa)) unsigned long stage_three(void)
{
	return hot_a() + hot_b() + 1;
}

__attribute__((noipa)) unsigned long stage_two(void)
{
	return stage_three() + 1;
}

__attribute__((noipa)) unsigned long stage_one(void)
{
	return stage_two() + 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noipa)) void *worker(void *unused)
{
	static volatile unsigned long sink;
	double end = now() + seconds;

	(void)unused;
	while (seconds <= 0 || now() < end)
		sink += stage_one();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (pthread_create(&thread, NULL, worker, NULL) != 0)
		return 1;
	worker(NULL);
	pthread_join(thread, NULL);
	return 0;
}
