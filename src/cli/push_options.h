/* The options that send a profile to a Pyroscope server, shared by the
 * commands that push (collect --push, push). */
#ifndef PROFCPU_PUSH_OPTIONS_H
#define PROFCPU_PUSH_OPTIONS_H

#include "options.h"
#include "pyroscope_push.h"

#include <sys/types.h>

struct push_options {
	const char *app_name;	   /* --app NAME */
	struct string_list labels; /* --label KEY=VALUE, repeatable */
	double timeout;		   /* --push-timeout SECONDS */
	char **owned;		   /* labels made from the target, freed with the options */
	size_t owned_count;
};

#define PUSH_OPTION_ENTRIES(push_options)                                                          \
	{"app", NULL, OPTION_STRING, &(push_options)->app_name},                                   \
	    {"label", NULL, OPTION_STRING_LIST, &(push_options)->labels},                          \
	{                                                                                          \
		"push-timeout", NULL, OPTION_NUMBER, &(push_options)->timeout                      \
	}

#define PUSH_OPTIONS_USAGE                                                                         \
	"  --app NAME            application name on the server (default: the process\n"           \
	"                        name)\n"                                                          \
	"  --label KEY=VALUE     a label of the pushed profile (repeatable)\n"                     \
	"  --push-timeout SECS   give up one try when the server is silent for SECS\n"             \
	"                        seconds (default 30); three tries\n"

/* Adds the labels profcpu knows about `pid` (0: none) before the user's:
 * process, hostname, container (its id, from its cgroup) and pod (the
 * hostname, in a Kubernetes pod). */
void push_options_add_target_labels(struct push_options *options, pid_t pid, const char *comm);

/* Pushes DIR/profile.pb.gz to `url` with these options. Returns 0 or -1. */
int push_options_push(const struct push_options *options, const char *dir, const char *url);

void push_options_release(struct push_options *options);

#endif
