/* Preloaded (LD_PRELOAD) into a program, keeps it on the CPU in
 * slow_start_spin for SLOW_START_SECONDS seconds (default 6) before its
 * main runs: a .NET host that loads its runtime seconds after it started,
 * as a loaded node or an entry script makes it (agent_late_runtime.sh). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void slow_start_spin(double seconds)
{
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

__attribute__((constructor)) static void slow_start(void)
{
	const char *seconds = getenv("SLOW_START_SECONDS");

	slow_start_spin(seconds ? atof(seconds) : 6);
}
