/* The options that say how folded stacks and the flame graph group samples
 * and name frames, shared by the commands that write them (collect,
 * postprocess). */
#ifndef PROFCPU_GROUPING_OPTIONS_H
#define PROFCPU_GROUPING_OPTIONS_H

#include "options.h"
#include "profile.h"

struct grouping_options {
	const char *group_by; /* --group-by thread|tid|process|pid */
	bool keep_tiers;      /* --keep-tiers */
	bool by_line;	      /* --lines */
};

#define GROUPING_OPTION_ENTRIES(grouping_options)                                                  \
	{"group-by", NULL, OPTION_STRING, &(grouping_options)->group_by},                          \
	    {"keep-tiers", NULL, OPTION_FLAG, &(grouping_options)->keep_tiers},                    \
	{                                                                                          \
		"lines", NULL, OPTION_FLAG, &(grouping_options)->by_line                           \
	}

#define GROUPING_OPTIONS_USAGE                                                                     \
	"  --group-by WHAT       what starts each stack: thread (its name, the\n"                  \
	"                        default, as stackcollapse-perf does), tid\n"                      \
	"                        (NAME-PID/TID), process or pid (NAME-PID, the\n"                  \
	"                        default of -a, --cgroup and --container)\n"                       \
	"  --keep-tiers          keep .NET tiers apart (Method [OptimizedTier1]); by\n"            \
	"                        default a method re-jitted during the capture is one\n"           \
	"                        frame\n"                                                          \
	"  --lines               a frame per function and source line (NAME FILE:LINE)\n"          \
	"                        in folded stacks and the flame graph, and perf's srcline\n"       \
	"                        lines in perf_script.out (which PerfView does not read)\n"

/* Fills `fold` from the options. Returns false after a one-line error when
 * --group-by names no grouping. */
bool grouping_options_apply(const struct grouping_options *options, struct fold_options *fold);

#endif
