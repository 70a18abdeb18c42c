/* A workload with a known split: two threads each spend 60% of their work in
 * spin_sixty, 30% in spin_thirty and 10% in spin_ten, each on its own call
 * path. Runs for argv[1] seconds (default: until killed). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UNIT 200000 /* loop iterations in one unit of work */

static volatile unsigned long sink;
static double seconds = 0;

__attribute__((noinline)) static void spin_sixty(void)
{
	for (unsigned long i = 0; i < 6 * UNIT; i++)
		sink += i;
}

__attribute__((noinline)) static void spin_thirty(void)
{
	for (unsigned long i = 0; i < 3 * UNIT; i++)
		sink += i;
}

__attribute__((noinline)) static void spin_ten(void)
{
	for (unsigned long i = 0; i < UNIT; i++)
		sink += i;
}

__attribute__((noinline)) static void path_a(void)
{
	spin_sixty();
}

__attribute__((noinline)) static void path_b(void)
{
	spin_thirty();
}

__attribute__((noinline)) static void path_c(void)
{
	spin_ten();
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *worker(void *unused)
{
	double end = now() + seconds;

	(void)unused;
	while (seconds <= 0 || now() < end) {
		path_a();
		path_b();
		path_c();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t second;

	if (argc > 1)
		seconds = atof(argv[1]);
	pthread_create(&second, NULL, worker, NULL);
	worker(NULL);
	pthread_join(second, NULL);
	return 0;
}
