/* Busy threads with deep stacks, for the whole-machine benchmark
 * (scripts/bench-whole-machine): argv[1] threads each descend a call tree
 * 24 calls deep, turning left or right at each level by the bits of a
 * counter, and spin at the bottom, so the stacks differ as a real program's
 * do and each is as deep as a service's. Built twice: with frame pointers
 * and without (only call frame information finds the callers). Runs for
 * argv[2] seconds (default: until killed). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH	   24
#define SPIN_COUNT 200000 /* iterations at the bottom of one descent */

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

__attribute__((noipa)) unsigned long descend_right(unsigned depth, unsigned long path);

__attribute__((noipa)) unsigned long descend_left(unsigned depth, unsigned long path)
{
	if (depth == 0)
		return spin(SPIN_COUNT) + 1;
	return ((path & 1) ? descend_right : descend_left)(depth - 1, path >> 1) + 1;
}

__attribute__((noipa)) unsigned long descend_right(unsigned depth, unsigned long path)
{
	if (depth == 0)
		return spin(SPIN_COUNT / 2) + 1;
	return ((path & 1) ? descend_right : descend_left)(depth - 1, path >> 1) + 1;
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
	/* Some 16 paths (the counter's low bits), each taken often. */
	for (unsigned long round = 0; seconds <= 0 || now() < end; round++)
		sink += descend_left(DEPTH, (round % 16) * 0x9e3779b9UL);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t thread;

	if (argc > 2)
		seconds = atof(argv[2]);
	for (int i = 1; i < threads; i++)
		if (pthread_create(&thread, NULL, worker, NULL) != 0)
			return 1;
	worker(NULL);
	return 0;
}
