/* The options that say which processes are sampled, shared by the commands
 * that sample (collect, watch): one process, or every process of the
 * machine, a cgroup or a container. */
#ifndef PROFCPU_SCOPE_OPTIONS_H
#define PROFCPU_SCOPE_OPTIONS_H

#include "grouping_options.h"
#include "options.h"
#include "profile.h"
#include "target_process.h"

struct scope_options {
	long pid;			   /* -pid, -p */
	bool every_process;		   /* -a, --all-cpus */
	const char *cgroup, *container_id; /* every process of a cgroup */
};

#define SCOPE_OPTION_ENTRIES(scope_options)                                                        \
	{"pid", "p", OPTION_INTEGER, &(scope_options)->pid},                                       \
	    {"all-cpus", "a", OPTION_FLAG, &(scope_options)->every_process},                       \
	    {"cgroup", NULL, OPTION_STRING, &(scope_options)->cgroup},                             \
	{                                                                                          \
		"container", NULL, OPTION_STRING, &(scope_options)->container_id                   \
	}

/* Returns -1 after a one-line error when -pid is no process id. */
int scope_options_check_pid(const struct scope_options *options);

/* -a, --cgroup or --container: fills `target` with every process in sight
 * (*cgroup: the container's cgroup, malloc'd) and folds stacks under their
 * process and its pid (NAME-PID) unless --group-by (`grouping`) says
 * otherwise: with many programs, the process is what a reader looks for
 * first, and several share one name (dotnet). Returns -1 after saying why
 * not. */
int scope_options_open_every_process(const struct scope_options *options,
				     const struct grouping_options *grouping,
				     struct target_process *target, char **cgroup,
				     struct fold_options *fold);

#endif
