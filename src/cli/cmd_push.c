/* profcpu push: send a capture folder's profile to a Pyroscope server. */
#include "commands.h"
#include "push_options.h"
#include "util.h"

static const char usage[] =
    "usage: profcpu push [options] DIR URL\n"
    "\n"
    "Sends DIR/profile.pb.gz (pprof, written by profcpu collect or postprocess)\n"
    "to the Pyroscope server at URL, through its push API\n"
    "(POST URL/push.v1.PusherService/Push, as Grafana Alloy's pyroscope.write),\n"
    "or with --api ingest its legacy one (POST URL/ingest?name=APP.cpu{LABELS}).\n"
    "Grafana Alloy's pyroscope.receive_http takes both. The time range and\n"
    "the sample rate come from the profile; the application (service_name) is\n"
    "the process name unless --app gives one. A server that cannot be reached,\n"
    "is too slow or answers 429 or 5xx is tried again after 1 s and 2 s; other\n"
    "answers are not.\n"
    "\n"
    "options:\n" PUSH_OPTIONS_USAGE "\n"
    "EXAMPLES:\n"
    "    profcpu push profilings/10-31-07_2026-11-22 http://pyroscope:4040   # one capture\n"
    "    profcpu push out http://localhost:4040 --app checkout --label env=staging\n"
    "    profcpu push out https://profiles-prod-001.grafana.net --basic-auth-user 123456 \\\n"
    "        --basic-auth-password-file /run/secrets/token      # Grafana Cloud\n";

int cmd_push(int argc, char **argv)
{
	enum options_result parsed;
	struct push_options push = {0};
	struct string_list positionals = {0};
	const struct option options[] = {
	    PUSH_OPTION_ENTRIES(&push),
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	int status = 2;

	parsed = options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);
	if (parsed != OPTIONS_PARSED) {
		status = options_exit_status(parsed);
		goto done;
	}
	if (positionals.count != 2) {
		report_error("push needs the capture folder and the server: profcpu push DIR URL");
		goto done;
	}
	if (push_options_prepare(&push, positionals.items[1]) < 0)
		goto done;
	status = push_options_push(&push, positionals.items[0]) ? 1 : 0;
done:
	string_list_clear(&positionals);
	push_options_release(&push);
	return status;
}
