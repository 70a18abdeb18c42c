/* A service that switches threads often, for the off-CPU benchmark: THREADS
 * threads (default 2) each handle "requests" that do a little work and then
 * sleep SLEEP_US microseconds (default 150), for SECONDS seconds (0: until
 * killed): about THREADS * 1e6 / (SLEEP_US + slack) switches a second.
 *   workload_switches [SECONDS [THREADS [SLEEP_US]]] */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long sleep_us = 150;

static void wait_for_backend(void)
{
	struct timespec pause = {0, sleep_us * 1000};

	nanosleep(&pause, NULL);
}

static double parse_request(int round)
{
	volatile double sum = 0;

	for (int i = 0; i < 2000; i++)
		sum += (double)(i ^ round);
	return sum;
}

static void handle_request(int round)
{
	parse_request(round);
	wait_for_backend();
}

static void *serve(void *unused)
{
	(void)unused;
	for (int round = 0;; round++)
		handle_request(round);
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 0;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t thread;

	if (argc > 3)
		sleep_us = atol(argv[3]);
	for (int i = 0; i < threads; i++)
		pthread_create(&thread, NULL, serve, NULL);
	if (seconds > 0) {
		sleep((unsigned)seconds);
		return 0;
	}
	for (;;)
		pause();
}
