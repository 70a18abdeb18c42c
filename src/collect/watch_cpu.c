#include "watch_cpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NS_PER_SECOND 1000000000ull

static uint64_t ticks_to_ns(unsigned long long ticks)
{
	long per_second = sysconf(_SC_CLK_TCK);

	return (uint64_t)ticks * (NS_PER_SECOND / (uint64_t)(per_second > 0 ? per_second : 100));
}

static bool process_cpu_time(pid_t pid, uint64_t *nanoseconds)
{
	unsigned long long ticks;

	if (!target_process_cpu_ticks(pid, &ticks))
		return false;
	*nanoseconds = ticks_to_ns(ticks);
	return true;
}

/* usage_usec of a cgroup v2 directory's cpu.stat. */
static bool cgroup_cpu_time(const char *cgroup, uint64_t *nanoseconds)
{
	char path[4096], key[64];
	unsigned long long value;
	bool found = false;
	FILE *file;

	snprintf(path, sizeof(path), "%s/cpu.stat", cgroup);
	if (!(file = fopen(path, "re")))
		return false;
	while (!found && fscanf(file, "%63s %llu", key, &value) == 2)
		found = !strcmp(key, "usage_usec");
	fclose(file);
	if (found)
		*nanoseconds = (uint64_t)value * 1000;
	return found;
}

/* The first line of /proc/stat: every CPU's time but idle and iowait. */
static bool machine_cpu_time(uint64_t *nanoseconds)
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal = 0;
	FILE *file = fopen("/proc/stat", "re");
	bool read;

	if (!file)
		return false;
	read = fscanf(file, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
		      &idle, &iowait, &irq, &softirq, &steal) >= 7;
	fclose(file);
	if (read)
		*nanoseconds = ticks_to_ns(user + nice + system + irq + softirq + steal);
	return read;
}

bool watch_cpu_time(const struct target_process *target, uint64_t *nanoseconds)
{
	if (target->pid != TARGET_EVERY_PROCESS)
		return process_cpu_time(target->pid, nanoseconds);
	return target->cgroup ? cgroup_cpu_time(target->cgroup, nanoseconds)
			      : machine_cpu_time(nanoseconds);
}

void watch_cpu_read(struct watch_cpu *cpu, uint64_t now)
{
	size_t last = (cpu->next + WATCH_CPU_READINGS - 1) % WATCH_CPU_READINGS;
	uint64_t time;

	if (cpu->count && now - cpu->readings[last].at < NS_PER_SECOND / 10)
		return;
	if (!watch_cpu_time(cpu->target, &time))
		return;
	cpu->readings[cpu->next].at = now;
	cpu->readings[cpu->next].cpu = time;
	cpu->next = (cpu->next + 1) % WATCH_CPU_READINGS;
	if (cpu->count < WATCH_CPU_READINGS)
		cpu->count++;
}

bool watch_cpu_percent(const struct watch_cpu *cpu, double *percent)
{
	size_t last = (cpu->next + WATCH_CPU_READINGS - 1) % WATCH_CPU_READINGS;
	uint64_t now = cpu->readings[last].at;
	bool found = false;
	size_t from = 0;

	/* The youngest reading at least 0.9 s older than the last. */
	for (size_t i = 0; i < cpu->count; i++) {
		size_t index = (last + WATCH_CPU_READINGS - i) % WATCH_CPU_READINGS;

		if (now - cpu->readings[index].at >= NS_PER_SECOND * 9 / 10) {
			from = index;
			found = true;
			break;
		}
	}
	if (!found)
		return false;
	*percent = 100.0 * (double)(cpu->readings[last].cpu - cpu->readings[from].cpu) /
		   (double)(now - cpu->readings[from].at);
	return true;
}
