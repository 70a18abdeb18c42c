/* Starts its busy threads only when the file argv[1] appears, so that they
 * are born after profiling began. The main thread sleeps. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void late_worker_spin(void)
{
	for (;;)
		for (unsigned long i = 0; i < 1000000; i++)
			sink += i;
}

static void *late_worker(void *unused)
{
	(void)unused;
	pthread_setname_np(pthread_self(), "late-worker");
	late_worker_spin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[2];

	if (argc < 2)
		return 2;
	while (access(argv[1], F_OK) != 0)
		usleep(10000);
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, late_worker, NULL);
	pause();
	return 0;
}
