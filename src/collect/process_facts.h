/* What `profcpu ps` and `profcpu serve` tell about each process profcpu can
 * see: enough to pick the pid to profile in a container or a pod. */
#ifndef PROFCPU_PROCESS_FACTS_H
#define PROFCPU_PROCESS_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum process_runtime { RUNTIME_NATIVE, RUNTIME_DOTNET, RUNTIME_NODE };

struct process_facts {
	pid_t pid;	     /* as profcpu sees it */
	pid_t namespace_pid; /* as the process sees itself */
	char comm[16];
	enum process_runtime runtime;
	char runtime_version[32]; /* .NET's, from its diagnostics IPC; "" if unknown */
	double cpu_percent;	  /* of one CPU, over the gathering interval */
	char container[13];	  /* container id (12 hex digits) from the cgroup; "" if none */
	char pod[37]; /* from the cgroup: Kubernetes pod uid, podman pod id (12 digits); "" if none
		       */
	bool has_perfmap; /* perf-<namespace pid>.map in its root (runtime_directories.h) */
};

/* Every user-space process in /proc but profcpu itself, with its CPU use
 * measured over `interval_ms`, busiest first. Returns how many were put in
 * `*facts` (malloc'd). */
size_t process_facts_gather(struct process_facts **facts, unsigned interval_ms);

/* "native", ".NET" or "node". */
const char *process_runtime_name(enum process_runtime runtime);

#endif
