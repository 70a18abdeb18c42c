/* A workload whose hot functions keep no frame pointer, built at -O2: the
 * leaf leaf_work (GCC drops the frame of a leaf even with
 * -fno-omit-frame-pointer) and libc's memset. Two threads each run
 *
 *   worker -> caller_a -> leaf_work   3 units
 *   worker -> caller_b -> leaf_work   1 unit
 *   worker -> fill_a   -> memset      2 units
 *   worker -> fill_b   -> memset      1 unit
 *
 * so caller_a holds 3/4 of leaf_work's time and fill_a 2/3 of memset's.
 * Frame-pointer callchains alone show worker;leaf_work and worker;memset.
 * Runs for argv[1] seconds (default: until killed). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEAF_UNIT   400000	/* leaf_work iterations in one unit */
#define FILL_UNIT   (64u << 20) /* bytes memset in one unit */
#define BUFFER_SIZE (4u << 20)

static double seconds = 0;

/* noipa: no inlining, cloning or merging, so each function keeps its name
 * and its own call. */
__attribute__((noipa)) unsigned long leaf_work(unsigned long count)
{
	unsigned long hash = count;

	for (unsigned long i = 0; i < count; i++)
		hash = hash * 6364136223846793005UL + i;
	return hash;
}

__attribute__((noipa)) unsigned long caller_a(void)
{
	return leaf_work(3 * LEAF_UNIT) + 1; /* the + 1 keeps the call from being a jump */
}

__attribute__((noipa)) unsigned long caller_b(void)
{
	return leaf_work(LEAF_UNIT) + 1;
}

__attribute__((noipa)) void fill_a(unsigned char *buffer)
{
	for (unsigned long done = 0; done < 2 * FILL_UNIT; done += BUFFER_SIZE)
		memset(buffer, (int)done, BUFFER_SIZE);
	buffer[0]++;
}

__attribute__((noipa)) void fill_b(unsigned char *buffer)
{
	for (unsigned long done = 0; done < FILL_UNIT; done += BUFFER_SIZE)
		memset(buffer, (int)done, BUFFER_SIZE);
	buffer[0]++;
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
	unsigned char *buffer = calloc(1, BUFFER_SIZE);
	double end = now() + seconds;

	(void)unused;
	while (buffer && (seconds <= 0 || now() < end)) {
		sink += caller_a();
		sink += caller_b();
		fill_a(buffer);
		fill_b(buffer);
	}
	free(buffer);
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
