/* The options that send a profile to a Pyroscope server, shared by the
 * commands that push (collect --push, push, agent), and the credentials
 * of the agent's OpenTelemetry receiver (--otlp), which are its own. */
#ifndef PROFCPU_PUSH_OPTIONS_H
#define PROFCPU_PUSH_OPTIONS_H

#include "options.h"
#include "pyroscope_push.h"

#include <sys/types.h>

struct push_options {
	const char *app_name; /* --app NAME */
	struct push_target_options target_options;
	struct push_target target; /* made by push_options_prepare */
	struct string_list labels; /* --label KEY=VALUE, repeatable */
	double timeout;		   /* --push-timeout SECONDS */
	char **owned;		   /* labels made from the target, freed with the options */
	size_t owned_count;
};

/* The API and the credentials, for every command that pushes (agent too). */
#define PUSH_TARGET_OPTION_ENTRIES(credentials)                                                    \
	{"api", NULL, OPTION_STRING, &(credentials)->api},                                         \
	    {"basic-auth-user", NULL, OPTION_STRING, &(credentials)->user},                        \
	    {"basic-auth-password-file", NULL, OPTION_STRING, &(credentials)->password_file},      \
	    {"basic-auth-password-env", NULL, OPTION_STRING, &(credentials)->password_env},        \
	    {"bearer-token-file", NULL, OPTION_STRING, &(credentials)->token_file},                \
	    {"tenant", NULL, OPTION_STRING, &(credentials)->tenant},                               \
	{                                                                                          \
		"header", NULL, OPTION_STRING_LIST, &(credentials)->headers                        \
	}

#define PUSH_TARGET_USAGE                                                                          \
	"  --api API             push (default: /push.v1.PusherService/Push, Pyroscope's\n"        \
	"                        stable API, Alloy's pyroscope.write) or ingest (/ingest,\n"       \
	"                        the legacy one)\n"                                                \
	"  --basic-auth-user USER  basic auth (also in the URL: http://USER:PASSWORD@host)\n"      \
	"  --basic-auth-password-file FILE\n"                                                      \
	"                        its password, read from FILE (a mounted Secret)\n"                \
	"  --basic-auth-password-env VAR\n"                                                        \
	"                        its password, read from the variable VAR\n"                       \
	"  --bearer-token-file FILE\n"                                                             \
	"                        Authorization: Bearer, the token read from FILE\n"                \
	"  --tenant ID           the tenant of a multi-tenant server (X-Scope-OrgID)\n"            \
	"  --header 'NAME: VALUE'\n"                                                               \
	"                        an extra header of every push (repeatable)\n"

/* The OpenTelemetry receiver's own credentials (agent --otlp): none of
 * Pyroscope's above go to it, nor these to Pyroscope. */
#define OTLP_TARGET_OPTION_ENTRIES(credentials)                                                    \
	{"otlp-basic-auth-user", NULL, OPTION_STRING, &(credentials)->user},                       \
	    {"otlp-basic-auth-password-file", NULL, OPTION_STRING, &(credentials)->password_file}, \
	    {"otlp-basic-auth-password-env", NULL, OPTION_STRING, &(credentials)->password_env},   \
	    {"otlp-bearer-token-file", NULL, OPTION_STRING, &(credentials)->token_file},           \
	{                                                                                          \
		"otlp-header", NULL, OPTION_STRING_LIST, &(credentials)->headers                   \
	}

#define OTLP_TARGET_USAGE                                                                          \
	"  --otlp-basic-auth-user USER  basic auth of the --otlp receiver (also in its\n"          \
	"                        URL: http://USER:PASSWORD@host)\n"                                \
	"  --otlp-basic-auth-password-file FILE\n"                                                 \
	"                        its password, read from FILE (a mounted Secret)\n"                \
	"  --otlp-basic-auth-password-env VAR\n"                                                   \
	"                        its password, read from the variable VAR\n"                       \
	"  --otlp-bearer-token-file FILE\n"                                                        \
	"                        Authorization: Bearer to the --otlp receiver, the\n"              \
	"                        token read from FILE\n"                                           \
	"  --otlp-header 'NAME: VALUE'\n"                                                          \
	"                        an extra header of every OTLP export (repeatable)\n"

#define PUSH_OPTION_ENTRIES(push_options)                                                          \
	PUSH_TARGET_OPTION_ENTRIES(&(push_options)->target_options),                               \
	    {"app", NULL, OPTION_STRING, &(push_options)->app_name},                               \
	    {"label", NULL, OPTION_STRING_LIST, &(push_options)->labels},                          \
	{                                                                                          \
		"push-timeout", NULL, OPTION_NUMBER, &(push_options)->timeout                      \
	}

#define PUSH_OPTIONS_USAGE                                                                         \
	"  --app NAME            application name on the server (default: the process\n"           \
	"                        name)\n"                                                          \
	"  --label KEY=VALUE     a label of the pushed profile (repeatable)\n"                     \
	"  --push-timeout SECS   give up one try when the server is silent for SECS\n"             \
	"                        seconds (default 30); three tries\n" PUSH_TARGET_USAGE

/* Adds the labels profcpu knows about `pid` (0: none) before the user's:
 * process, hostname, container (its id, from its cgroup) and pod (the
 * hostname, in a Kubernetes pod). */
void push_options_add_target_labels(struct push_options *options, pid_t pid, const char *comm);

/* Makes the target of `url`: its credentials read and checked, before
 * anything is sampled. Returns 0, or -1 after saying why. */
int push_options_prepare(struct push_options *options, const char *url);

/* Pushes DIR/profile.pb.gz to the prepared target. Returns 0 or -1. */
int push_options_push(const struct push_options *options, const char *dir);

void push_options_release(struct push_options *options);

#endif
