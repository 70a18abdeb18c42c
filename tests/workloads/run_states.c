/* Threads whose every leave of the CPU is of one known kind, for the
 * off-CPU tests: SPINNERS threads (default 2) named "spinner" that never
 * block, so that each leaves its CPU only when preempted (runnable, R), and
 * one named "sleeper" that sleeps a millisecond at a time, so that it
 * leaves its CPU blocked (S). The process pins itself to the first CPU it
 * may run on, where the spinners take turns. Runs for SECONDS seconds.
 *   workload_run_states SECONDS [SPINNERS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *unused)
{
	(void)unused;
	for (;;)
		sink++;
	return NULL;
}

static void *sleep_often(void *unused)
{
	struct timespec millisecond = {0, 1000000};

	(void)unused;
	for (;;)
		nanosleep(&millisecond, NULL);
	return NULL;
}

/* Pins the process (its threads to come) to the first CPU it may use. */
static void pin_to_one_cpu(void)
{
	cpu_set_t allowed, one;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	int spinners = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t thread;

	pin_to_one_cpu();
	for (int i = 0; i < spinners; i++) {
		pthread_create(&thread, NULL, spin, NULL);
		pthread_setname_np(thread, "spinner");
	}
	pthread_create(&thread, NULL, sleep_often, NULL);
	pthread_setname_np(thread, "sleeper");
	sleep((unsigned)seconds);
	return 0;
}
