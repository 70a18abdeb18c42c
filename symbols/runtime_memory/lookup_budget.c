#include "lookup_budget.h"

#include <time.h>

#define SECOND_NS 1e9

static uint64_t now_ns(clockid_t clock)
{
	struct timespec now = {0};

	clock_gettime(clock, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void lookup_budget_init(struct lookup_budget *budget, double window_seconds, double cpu_share,
			double wall_share)
{
	budget->cpu_share = cpu_share;
	budget->wall_share = wall_share;
	lookup_budget_start(budget, window_seconds);
}

void lookup_budget_start(struct lookup_budget *budget, double seconds)
{
	budget->window_ns = (uint64_t)(seconds * SECOND_NS);
	budget->window_start_ns = now_ns(CLOCK_MONOTONIC);
	budget->cpu_spent_ns = budget->wall_spent_ns = 0;
}

static uint64_t wall_allowed_ns(const struct lookup_budget *budget)
{
	return (uint64_t)(budget->wall_share * (double)budget->window_ns);
}

bool lookup_budget_left(struct lookup_budget *budget)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (now - budget->window_start_ns >= budget->window_ns) {
		budget->window_start_ns = now;
		budget->cpu_spent_ns = budget->wall_spent_ns = 0;
	}
	return budget->cpu_spent_ns < (uint64_t)(budget->cpu_share * (double)budget->window_ns) &&
	       budget->wall_spent_ns < wall_allowed_ns(budget);
}

double lookup_budget_wall_left(const struct lookup_budget *budget)
{
	uint64_t allowed = wall_allowed_ns(budget);

	return budget->wall_spent_ns >= allowed
		   ? 0
		   : (double)(allowed - budget->wall_spent_ns) / SECOND_NS;
}

struct lookup_clock lookup_budget_begin(void)
{
	return (struct lookup_clock){.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID),
				     .wall_ns = now_ns(CLOCK_MONOTONIC)};
}

void lookup_budget_spend(struct lookup_budget *budget, struct lookup_clock began)
{
	budget->cpu_spent_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - began.cpu_ns;
	budget->wall_spent_ns += now_ns(CLOCK_MONOTONIC) - began.wall_ns;
}

uint64_t lookup_budget_cpu_spent(const struct lookup_budget *budget)
{
	return budget->cpu_spent_ns;
}
