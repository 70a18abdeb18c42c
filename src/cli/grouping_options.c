#include "grouping_options.h"
#include "util.h"

#include <strings.h>

bool grouping_options_apply(const struct grouping_options *options, struct fold_options *fold)
{
	static const struct {
		const char *name;
		enum fold_group group;
	} groups[] = {{"thread", FOLD_BY_THREAD},
		      {"tid", FOLD_BY_TID},
		      {"process", FOLD_BY_PROCESS},
		      {"pid", FOLD_BY_PID}};

	*fold = (struct fold_options){.group_by = FOLD_BY_THREAD,
				      .keep_tiers = options->keep_tiers,
				      .by_line = options->by_line};
	if (!options->group_by)
		return true;
	for (size_t i = 0; i < sizeof(groups) / sizeof(*groups); i++)
		if (!strcasecmp(options->group_by, groups[i].name)) {
			fold->group_by = groups[i].group;
			return true;
		}
	report_error("invalid --group-by %s: give thread, tid, process or pid", options->group_by);
	return false;
}
