/* Spends most of its time in a signal handler: a timer interrupts the loop
 * of interrupted_loop every millisecond of CPU time and the handler spins.
 * A walk from the handler goes through the signal frame (glibc's
 * __restore_rt, whose CFI gives every register from the ucontext on the
 * stack) to the interrupted code and on to main. Built without frame
 * pointers. Runs for argv[1] seconds. */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noipa)) static void spin_in_handler(void)
{
	for (int i = 0; i < 1000000; i++)
		sink += i;
}

static void on_timer(int signal)
{
	(void)signal;
	spin_in_handler();
	sink++;
}

__attribute__((noipa)) static void interrupted_loop(double end)
{
	struct timespec t;

	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < end);
}

int main(int argc, char **argv)
{
	struct itimerval every_millisecond = {{0, 1000}, {0, 1000}};
	struct timespec t;

	signal(SIGPROF, on_timer);
	setitimer(ITIMER_PROF, &every_millisecond, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t);
	interrupted_loop((double)t.tv_sec + (double)t.tv_nsec / 1e9 +
			 (argc > 1 ? atof(argv[1]) : 1e9));
	sink++;
	return 0;
}
