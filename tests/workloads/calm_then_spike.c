/* A service that is calm, then spikes (tests/watch_*.sh): for argv[1]
 * seconds (default 12) it uses a fifth of a core in calm_work (20 ms of
 * CPU, then 80 ms asleep), then for argv[2] seconds (default: until killed)
 * a whole core in spike_work. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define SPIKE_THREADS 4

static volatile unsigned long sink;

static double seconds_of(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Busy for `cpu` seconds of this thread's CPU time, however loaded the
 * machine is. */
__attribute__((noinline)) static void calm_work(double cpu)
{
	double end = seconds_of(CLOCK_THREAD_CPUTIME_ID) + cpu;

	while (seconds_of(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) static void spike_work(double seconds)
{
	double end = seconds_of(CLOCK_MONOTONIC) + seconds;

	while (seconds <= 0 || seconds_of(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

static void *spike_thread(void *seconds)
{
	spike_work(*(double *)seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	double calm = argc > 1 ? atof(argv[1]) : 12, spike = argc > 2 ? atof(argv[2]) : 0;
	double end = seconds_of(CLOCK_MONOTONIC) + calm;
	const struct timespec pause = {.tv_nsec = 80 * 1000 * 1000};

	while (seconds_of(CLOCK_MONOTONIC) < end) {
		calm_work(0.02);
		nanosleep(&pause, NULL);
	}
	pthread_t threads[SPIKE_THREADS - 1];

	for (int i = 0; i < SPIKE_THREADS - 1; i++)
		pthread_create(&threads[i], NULL, spike_thread, &spike);
	spike_work(spike);
	for (int i = 0; i < SPIKE_THREADS - 1; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
