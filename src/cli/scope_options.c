#include "scope_options.h"
#include "sampling_scope.h"
#include "util.h"

#include <limits.h>

int scope_options_check_pid(const struct scope_options *options)
{
	if (options->pid < 0 || options->pid > INT_MAX) {
		report_error("invalid -pid %ld: give a process id", options->pid);
		return -1;
	}
	return 0;
}

int scope_options_open_every_process(const struct scope_options *options,
				     const struct grouping_options *grouping,
				     struct target_process *target, char **cgroup,
				     struct fold_options *fold)
{
	if (options->container_id &&
	    !(*cgroup = sampling_scope_container_cgroup(options->container_id)))
		return -1;
	if (!*cgroup && options->cgroup)
		*cgroup = xstrdup(options->cgroup);
	if (!grouping->group_by)
		fold->group_by = FOLD_BY_PID;
	return sampling_scope_open(*cgroup, target);
}
