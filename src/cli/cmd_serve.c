/* profcpu serve: an HTTP endpoint for clusters where nobody execs into pods
 * (dotnet-monitor's idea): list the processes, capture one for N seconds and
 * get the flame graph, zip, folded stacks or pprof back, or keep the last
 * seconds of one with a watch beside the server and trigger it. libmicrohttpd
 * serves; each capture is a child `profcpu collect` (serve_capture.h), the
 * watch a child `profcpu watch` (serve_watch.h). */
#include "commands.h"
#include "library_loader.h"
#include "options.h"
#include "process_listing.h"
#include "serve_capture.h"
#include "serve_watch.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* libmicrohttpd is opened when serve starts (library_loader.h): it brings
 * GnuTLS and its libraries, which every other command would load for
 * nothing. */
#define MICROHTTPD_FUNCTIONS(X)                                                                    \
	X(MHD_add_response_header)                                                                 \
	X(MHD_create_response_from_buffer)                                                         \
	X(MHD_create_response_from_fd)                                                             \
	X(MHD_destroy_response)                                                                    \
	X(MHD_get_daemon_info)                                                                     \
	X(MHD_lookup_connection_value)                                                             \
	X(MHD_queue_response)                                                                      \
	X(MHD_start_daemon)                                                                        \
	X(MHD_stop_daemon)

static struct {
	MICROHTTPD_FUNCTIONS(LIBRARY_FUNCTION_POINTER)
} mhd;

/* Fills `mhd`, or says on one line why it cannot. */
static bool load_microhttpd(void)
{
#define ENTRY(name) LIBRARY_FUNCTION_ENTRY(mhd, name)
	const struct library_function functions[] = {MICROHTTPD_FUNCTIONS(ENTRY)};
#undef ENTRY
	char why[192];

	if (library_load("libmicrohttpd.so.12", "libmicrohttpd12", functions,
			 sizeof(functions) / sizeof(*functions), why, sizeof(why)))
		return true;
	report_error("serve %s", why);
	return false;
}

static const char usage[] =
    "usage: profcpu serve [options]\n"
    "\n"
    "Answers HTTP requests until SIGTERM or Ctrl-C:\n"
    "  GET  /processes                  the processes, as 'profcpu ps -json'\n"
    "  POST /captures?pid=P&seconds=S&format=F\n"
    "                                   samples P for S seconds (1 to 3600; default 10)\n"
    "                                   and answers with one output; F is svg (default),\n"
    "                                   zip, folded, pprof, speedscope, perf-script, tar,\n"
    "                                   perf-data, log; with off_cpu=1 offcpu,\n"
    "                                   offcpu-folded or wall; of a .NET target\n"
    "                                   nettrace, exceptions, contention, alloc, waits\n"
    "                                   (flame graphs) or the same with -pprof. The\n"
    "                                   header X-Profcpu-Capture names the capture's\n"
    "                                   folder. As collect's options of the same names:\n"
    "                                   &frequency=HZ (1 to 10000; default 99),\n"
    "                                   &off_cpu=1, &call_graph=fp|dwarf|hybrid,\n"
    "                                   &events=LIST (a .NET target's runtime events)\n"
    "  GET  /captures                   the captures kept in the output folder\n"
    "  GET  /captures/NAME/FORMAT       one output of a kept capture (F or its file name)\n"
    "  GET  /watch                      the watch's state (--watch): running or how it\n"
    "                                   ended, its options, the rules that fired, its\n"
    "                                   captures\n"
    "  POST /watch/trigger              a manual trigger of the watch (its SIGUSR1): a\n"
    "                                   capture of the last --before seconds and the\n"
    "                                   --after ones, listed in /captures once written\n"
    "One capture runs at a time: another gets 409 with Retry-After. Errors are\n"
    "JSON: {\"error\": \"...\"}. Every capture stays in the output folder, also when\n"
    "its client went away; SIGTERM ends a running capture early, keeping what it\n"
    "collected.\n"
    "\n"
    "It listens on loopback only, unless a token is set; with a token, every\n"
    "request must send 'Authorization: Bearer TOKEN'.\n"
    "\n"
    "options:\n"
    "  -address ADDR         IPv4 or IPv6 address to listen on (default 127.0.0.1);\n"
    "                        any other than loopback needs a token\n"
    "  -port PORT            (default 7071)\n"
    "  -token-file FILE      the token, e.g. a Kubernetes secret; or $PROFCPU_SERVE_TOKEN\n"
    "  -o, -output DIR       where captures are kept (default profilings)\n"
    "\n"
    "the flight recorder beside the server (as profcpu watch, see its --help):\n"
    "  --watch PID|NAME      runs profcpu watch on this process (a pid, or the name\n"
    "                        of the one process so named, as profcpu ps shows it)\n"
    "                        until the server ends: a ring of the last seconds,\n"
    "                        written as a capture into the output folder when a\n"
    "                        rule fires or on POST /watch/trigger; these options\n"
    "                        pass on to it:\n"
    "  --before SECONDS      kept before a trigger (default 30)\n"
    "  --after SECONDS       sampled after it (default 10)\n"
    "  --cpu PERCENT         the target's CPU over the last second passes PERCENT\n"
    "                        of one core\n"
    "  --exceptions N        a .NET target threw N or more exceptions a second\n"
    "  --gc-pause MS         one GC of a .NET target paused it MS ms or longer\n"
    "  --contention MS       a .NET target waited MS ms or more a second for locks\n"
    "  --threadpool-queue N  a .NET target's thread pool queue held N or more work\n"
    "                        items (the runtime's threadpool-queue-length counter)\n"
    "  --cooldown SECONDS    after a capture, rules are not heard (default 60)\n"
    "  --max-captures N      at most N captures an hour (default 6)\n"
    "  --max-disk MIB        no new capture once the watch's take MIB (default 2048)\n"
    "  -F, -frequency HZ     the watch's samples per second (default 99)\n"
    "  --off-cpu             the watch also records when threads leave the CPU:\n"
    "                        its captures' offcpu_* and wall_* outputs\n"
    "\n"
    "EXAMPLES:\n"
    "    profcpu serve                                  # http://127.0.0.1:7071\n"
    "    curl http://127.0.0.1:7071/processes\n"
    "    curl -X POST -o flame.svg 'http://127.0.0.1:7071/captures?pid=12&seconds=30'\n"
    "    curl -X POST -o wall.svg 'http://127.0.0.1:7071/captures?pid=12&off_cpu=1&format=wall'\n"
    "    PROFCPU_SERVE_TOKEN=s3cret profcpu serve -address 0.0.0.0  # for the pod network\n"
    "    curl -H 'Authorization: Bearer s3cret' http://POD_IP:7071/processes\n"
    "    profcpu serve --watch dotnet --cpu 80 --before 30  # the last 30 s, kept\n"
    "    curl -X POST http://127.0.0.1:7071/watch/trigger  # a capture of them now\n";

#define MAX_CAPTURE_SECONDS 3600
#define MAX_FREQUENCY	    10000

struct server {
	const char *output_dir;
	char *token; /* NULL: none (loopback only) */
	pthread_mutex_t lock;
	bool capturing; /* under lock, as the two below */
	time_t capture_ends;
	struct capture capture;
	struct serve_watch *watch; /* --watch; NULL: none */
};

/* Marks a request whose headers were seen (libmicrohttpd calls the
 * handler again for the body and once more when it has ended). */
static int request_started;

static enum MHD_Result send_text(struct MHD_Connection *connection, unsigned status,
				 const char *content_type, const char *text, const char *header,
				 const char *value)
{
	struct MHD_Response *response =
	    mhd.MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result queued;

	mhd.MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (header)
		mhd.MHD_add_response_header(response, header, value);
	queued = mhd.MHD_queue_response(connection, status, response);
	mhd.MHD_destroy_response(response);
	return queued;
}

/* {"error": MESSAGE}, with one optional header. */
static enum MHD_Result send_error(struct MHD_Connection *connection, unsigned status,
				  const char *header, const char *value, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

static enum MHD_Result send_error(struct MHD_Connection *connection, unsigned status,
				  const char *header, const char *value, const char *format, ...)
{
	char message[1024], *json = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&json, &size);
	enum MHD_Result queued;
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(message, sizeof(message), format, arguments);
	va_end(arguments);
	fprintf(out, "{\"error\": ");
	json_write_string(out, message);
	fprintf(out, "}\n");
	fclose(out);
	queued = send_text(connection, status, "application/json", json, header, value);
	free(json);
	return queued;
}

/* A capture or file name from a URL: letters, digits, '.', '-', '_', not
 * starting with '.', so it never leaves the output folder. */
static bool is_plain_name(const char *name)
{
	if (!name[0] || name[0] == '.' || strlen(name) > 128)
		return false;
	for (const char *c = name; *c; c++)
		if (!(isalnum((unsigned char)*c) || *c == '.' || *c == '-' || *c == '_'))
			return false;
	return true;
}

/* Answers with the file FORMAT of the capture NAME. */
static enum MHD_Result send_capture_file(struct MHD_Connection *connection,
					 const struct server *server, const char *name,
					 const struct capture_format *format)
{
	char *folder = xasprintf("%s/%s", server->output_dir, name);
	char *path = xasprintf("%s/%s", folder, format->file);
	struct stat status;
	bool is_capture = stat(folder, &status) == 0 && S_ISDIR(status.st_mode);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct MHD_Response *response;
	enum MHD_Result queued;

	free(folder);
	free(path);
	if (fd < 0 || fstat(fd, &status) < 0 || !S_ISREG(status.st_mode)) {
		if (fd >= 0)
			close(fd);
		if (!is_capture)
			return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
					  "no capture named %s (GET /captures lists them)", name);
		return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
				  "capture %s has no %s: it failed, or this profcpu does not "
				  "write that format (its profcpu.log: GET /captures/%s/log)",
				  name, format->file, name);
	}
	response = mhd.MHD_create_response_from_fd((uint64_t)status.st_size, fd);
	mhd.MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, format->content_type);
	mhd.MHD_add_response_header(response, "X-Profcpu-Capture", name);
	queued = mhd.MHD_queue_response(connection, MHD_HTTP_OK, response);
	mhd.MHD_destroy_response(response);
	return queued;
}

static enum MHD_Result list_processes(struct MHD_Connection *connection)
{
	struct process_facts *facts;
	size_t count = process_facts_gather(&facts, 500), size = 0;
	char *json = NULL;
	FILE *out = open_memstream(&json, &size);
	enum MHD_Result queued;

	process_listing_write_json(out, facts, count);
	fclose(out);
	free(facts);
	queued = send_text(connection, MHD_HTTP_OK, "application/json", json, NULL, NULL);
	free(json);
	return queued;
}

static enum MHD_Result list_captures(struct MHD_Connection *connection, const struct server *server)
{
	DIR *folder = opendir(server->output_dir);
	struct dirent *entry;
	char *json = NULL;
	size_t size = 0, listed = 0;
	FILE *out = open_memstream(&json, &size);
	enum MHD_Result queued;

	fprintf(out, "{\"captures\": [");
	while (folder && (entry = readdir(folder)))
		if (entry->d_type == DT_DIR && is_plain_name(entry->d_name)) {
			fprintf(out, "%s", listed++ ? ", " : "");
			json_write_string(out, entry->d_name);
		}
	fprintf(out, "]}\n");
	fclose(out);
	if (folder)
		closedir(folder);
	queued = send_text(connection, MHD_HTTP_OK, "application/json", json, NULL, NULL);
	free(json);
	return queued;
}

/* A whole decimal number in [minimum, maximum], or -1. */
static long parse_number(const char *text, long minimum, long maximum)
{
	char *end;
	long value;

	if (!text || !*text)
		return -1;
	errno = 0;
	value = strtol(text, &end, 10);
	return *end || errno || value < minimum || value > maximum ? -1 : value;
}

static const char *query_value(struct MHD_Connection *connection, const char *key)
{
	return mhd.MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, key);
}

/* off_cpu=1 or true: 1; 0, false or absent: 0; else -1. */
static int parse_flag(const char *text)
{
	if (!text || !strcmp(text, "0") || !strcmp(text, "false"))
		return 0;
	return !strcmp(text, "1") || !strcmp(text, "true") ? 1 : -1;
}

/* An events list collect will read: its names, commas and a provider's
 * "Name:0xKEYWORDS:LEVEL", never an option of collect's own. */
static bool events_list_form(const char *text)
{
	size_t length = strlen(text);

	if (!length || length > 512 || text[0] == '-')
		return false;
	return strspn(text,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:") ==
	       length;
}

/* The capture options of a POST /captures into `request`: 0, or -1 after
 * the 400 answer saying which is wrong. */
static int read_capture_request(struct MHD_Connection *connection, struct capture_request *request,
				enum MHD_Result *answered)
{
	const char *pid_text = query_value(connection, "pid");
	const char *seconds_text = query_value(connection, "seconds");
	const char *frequency_text = query_value(connection, "frequency");
	const char *call_graph = query_value(connection, "call_graph");
	const char *events = query_value(connection, "events");
	long pid = parse_number(pid_text, 1, 0x7fffffff);
	long seconds = seconds_text ? parse_number(seconds_text, 1, MAX_CAPTURE_SECONDS) : 10;
	long frequency = frequency_text ? parse_number(frequency_text, 1, MAX_FREQUENCY) : 0;
	int off_cpu = parse_flag(query_value(connection, "off_cpu"));

	if (pid < 0)
		*answered = send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				       "give the process as pid=N (GET /processes lists them)");
	else if (seconds < 0)
		*answered =
		    send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
			       "seconds must be a whole number from 1 to %d", MAX_CAPTURE_SECONDS);
	else if (frequency < 0)
		*answered = send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				       "frequency must be a whole number of Hz from 1 to %d",
				       MAX_FREQUENCY);
	else if (off_cpu < 0)
		*answered = send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				       "off_cpu must be 1 or 0");
	else if (call_graph && strcmp(call_graph, "fp") && strcmp(call_graph, "dwarf") &&
		 strcmp(call_graph, "hybrid"))
		*answered = send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				       "call_graph must be fp, dwarf or hybrid");
	else if (events && !events_list_form(events))
		*answered = send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				       "events must be a comma-separated list such as "
				       "gc,exceptions,contention");
	else {
		*request = (struct capture_request){.pid = (pid_t)pid,
						    .seconds = (unsigned)seconds,
						    .frequency = (unsigned)frequency,
						    .off_cpu = off_cpu,
						    .call_graph = call_graph,
						    .events = events};
		return 0;
	}
	return -1;
}

/* POST /captures: one capture at a time, run to its end even when the
 * client goes away, then its output FORMAT. */
static enum MHD_Result start_capture(struct MHD_Connection *connection, struct server *server)
{
	const char *format_name = query_value(connection, "format");
	const struct capture_format *format =
	    capture_format_find(format_name ? format_name : "svg");
	struct capture_request request;
	enum MHD_Result answered;
	char error[512] = "", retry[24], path[32], names[512], name[64];
	int status;

	if (read_capture_request(connection, &request, &answered) < 0)
		return answered;
	if (!format) {
		capture_format_names(names, sizeof(names));
		return send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				  "unknown format '%s': choose one of %s", format_name, names);
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)request.pid);
	if (access(path, F_OK) < 0)
		return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
				  "no process with pid %d here (GET /processes lists them)",
				  (int)request.pid);
	pthread_mutex_lock(&server->lock);
	if (server->capturing) {
		long left = (long)(server->capture_ends - time(NULL));

		pthread_mutex_unlock(&server->lock);
		snprintf(retry, sizeof(retry), "%ld", left > 1 ? left : 1);
		return send_error(connection, MHD_HTTP_CONFLICT, MHD_HTTP_HEADER_RETRY_AFTER, retry,
				  "a capture is already running (one at a time): try again in "
				  "%s s",
				  retry);
	}
	status =
	    capture_start(&server->capture, server->output_dir, &request, error, sizeof(error));
	server->capturing = status == 0;
	server->capture_ends = time(NULL) + request.seconds;
	snprintf(name, sizeof(name), "%s", server->capture.name);
	pthread_mutex_unlock(&server->lock);
	if (status < 0)
		return send_error(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, NULL, "%s",
				  error);

	status = capture_finish(&server->capture, error, sizeof(error));
	pthread_mutex_lock(&server->lock);
	capture_release(&server->capture);
	server->capturing = false;
	pthread_mutex_unlock(&server->lock);
	if (status == CAPTURE_REFUSED)
		return send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL, "%s", error);
	if (status < 0)
		return send_error(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "X-Profcpu-Capture",
				  name, "capture %s: %s", name, error);
	return send_capture_file(connection, server, name, format);
}

/* GET /captures/NAME/FORMAT */
static enum MHD_Result get_capture_file(struct MHD_Connection *connection,
					const struct server *server, const char *path)
{
	char name[160];
	const char *slash = strchr(path, '/');
	const struct capture_format *format = slash ? capture_format_find(slash + 1) : NULL;

	if (!slash || slash - path >= (long)sizeof(name))
		return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
				  "ask for /captures/NAME/FORMAT (GET /captures lists the names)");
	snprintf(name, sizeof(name), "%.*s", (int)(slash - path), path);
	if (!is_plain_name(name))
		return send_error(connection, MHD_HTTP_BAD_REQUEST, NULL, NULL,
				  "'%s' is not a capture name", name);
	if (!format) {
		char names[512];

		capture_format_names(names, sizeof(names));
		return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
				  "unknown format '%s': choose one of %s", slash + 1, names);
	}
	return send_capture_file(connection, server, name, format);
}

/* GET /watch */
static enum MHD_Result send_watch_state(struct MHD_Connection *connection,
					struct serve_watch *watch)
{
	char *json = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&json, &size);
	enum MHD_Result queued;

	serve_watch_write_json(watch, out);
	fclose(out);
	queued = send_text(connection, MHD_HTTP_OK, "application/json", json, NULL, NULL);
	free(json);
	return queued;
}

/* POST /watch/trigger: the capture follows --after seconds later, unless
 * the watch's cool-down or limits skip it (GET /watch says so). */
static enum MHD_Result trigger_watch(struct MHD_Connection *connection, struct serve_watch *watch)
{
	char ended[768];

	if (!serve_watch_trigger(watch, ended, sizeof(ended)))
		return send_error(connection, MHD_HTTP_CONFLICT, NULL, NULL,
				  "the watch has ended: %s", ended);
	return send_text(connection, MHD_HTTP_ACCEPTED, "application/json",
			 "{\"triggered\": true}\n", NULL, NULL);
}

/* /watch and /watch/trigger */
static enum MHD_Result answer_watch(struct MHD_Connection *connection, struct serve_watch *watch,
				    const char *url, const char *method)
{
	if (!watch)
		return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
				  "this server runs no watch: start it with --watch PID");
	if (!strcmp(url, "/watch") && !strcmp(method, MHD_HTTP_METHOD_GET))
		return send_watch_state(connection, watch);
	if (!strcmp(url, "/watch/trigger") && !strcmp(method, MHD_HTTP_METHOD_POST))
		return trigger_watch(connection, watch);
	return send_error(connection, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, NULL,
			  "%s %s: the watch answers GET /watch and POST /watch/trigger", method,
			  url);
}

/* Compares without stopping at the first difference, so the time taken
 * tells nothing about the token. */
static bool same_secret(const char *given, const char *token)
{
	size_t given_length = strlen(given), token_length = strlen(token);
	unsigned char difference = given_length != token_length;

	for (size_t i = 0; i < token_length; i++)
		difference |= (unsigned char)(token[i] ^ given[i < given_length ? i : 0]);
	return difference == 0;
}

static enum MHD_Result answer(void *context, struct MHD_Connection *connection, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **request_state)
{
	struct server *server = context;
	bool is_get = !strcmp(method, MHD_HTTP_METHOD_GET);
	bool is_post = !strcmp(method, MHD_HTTP_METHOD_POST);

	(void)version, (void)upload_data;
	if (!*request_state) {
		*request_state = &request_started;
		return MHD_YES;
	}
	if (*upload_data_size) { /* no request takes a body: skip it */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (server->token) {
		const char *authorization = mhd.MHD_lookup_connection_value(
		    connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);

		if (!authorization || strncmp(authorization, "Bearer ", 7) ||
		    !same_secret(authorization + 7, server->token))
			return send_error(connection, MHD_HTTP_UNAUTHORIZED,
					  MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer",
					  "this server needs its token: send 'Authorization: "
					  "Bearer TOKEN'");
	}
	if (!strcmp(url, "/processes") && is_get)
		return list_processes(connection);
	if (!strcmp(url, "/captures") && is_post)
		return start_capture(connection, server);
	if (!strcmp(url, "/captures") && is_get)
		return list_captures(connection, server);
	if (!strncmp(url, "/captures/", 10) && is_get)
		return get_capture_file(connection, server, url + 10);
	if (!strcmp(url, "/watch") || !strcmp(url, "/watch/trigger"))
		return answer_watch(connection, server->watch, url, method);
	if (!strcmp(url, "/processes") || !strncmp(url, "/captures", 9))
		return send_error(connection, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, NULL,
				  "%s %s: captures start with POST /captures?pid=N, the rest is "
				  "GET",
				  method, url);
	return send_error(connection, MHD_HTTP_NOT_FOUND, NULL, NULL,
			  "no such endpoint %s: there are /processes, /captures and /watch", url);
}

/* The token from -token-file or $PROFCPU_SERVE_TOKEN (malloc'd), NULL if
 * none is set; exits on an unreadable or empty file. */
static char *read_token(const char *token_file)
{
	char *token = NULL;
	size_t size = 0;
	FILE *file;

	if (!token_file) {
		const char *variable = getenv("PROFCPU_SERVE_TOKEN");

		return variable && *variable ? xstrdup(variable) : NULL;
	}
	file = fopen(token_file, "re");
	if (!file || getline(&token, &size, file) < 0)
		die("cannot read the token from %s: %s", token_file,
		    file ? "it is empty" : strerror(errno));
	fclose(file);
	token[strcspn(token, "\r\n")] = '\0';
	if (!*token)
		die("the token in %s is empty", token_file);
	return token;
}

/* Fills `address` from ADDR and PORT; returns its length, 0 if ADDR is no
 * numeric IPv4 or IPv6 address. */
static socklen_t make_address(const char *text, unsigned port, struct sockaddr_storage *address,
			      bool *is_loopback)
{
	struct sockaddr_in *ipv4 = (struct sockaddr_in *)address;
	struct sockaddr_in6 *ipv6 = (struct sockaddr_in6 *)address;

	memset(address, 0, sizeof(*address));
	if (inet_pton(AF_INET, text, &ipv4->sin_addr) == 1) {
		ipv4->sin_family = AF_INET;
		ipv4->sin_port = htons((uint16_t)port);
		*is_loopback = (ntohl(ipv4->sin_addr.s_addr) >> 24) == 127;
		return sizeof(*ipv4);
	}
	if (inet_pton(AF_INET6, text, &ipv6->sin6_addr) == 1) {
		ipv6->sin6_family = AF_INET6;
		ipv6->sin6_port = htons((uint16_t)port);
		*is_loopback = IN6_IS_ADDR_LOOPBACK(&ipv6->sin6_addr);
		return sizeof(*ipv6);
	}
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	const char *address_text = "127.0.0.1", *token_file = NULL;
	long port = 7071;
	struct server server = {.output_dir = "profilings", .lock = PTHREAD_MUTEX_INITIALIZER};
	struct string_list positionals = {0};
	struct serve_watch_options watch_options = SERVE_WATCH_OPTIONS_INIT;
	const struct option options[] = {
	    {"address", NULL, OPTION_STRING, &address_text},
	    {"port", NULL, OPTION_INTEGER, &port},
	    {"token-file", NULL, OPTION_STRING, &token_file},
	    {"output", "o", OPTION_STRING, &server.output_dir},
	    {"watch", NULL, OPTION_STRING, &watch_options.target},
	    {"before", NULL, OPTION_NUMBER, &watch_options.before},
	    {"after", NULL, OPTION_NUMBER, &watch_options.after},
	    {"cpu", NULL, OPTION_NUMBER, &watch_options.cpu},
	    {"exceptions", NULL, OPTION_NUMBER, &watch_options.exceptions},
	    {"gc-pause", NULL, OPTION_NUMBER, &watch_options.gc_pause},
	    {"contention", NULL, OPTION_NUMBER, &watch_options.contention},
	    {"threadpool-queue", NULL, OPTION_NUMBER, &watch_options.threadpool_queue},
	    {"cooldown", NULL, OPTION_NUMBER, &watch_options.cooldown},
	    {"max-captures", NULL, OPTION_NUMBER, &watch_options.max_captures},
	    {"max-disk", NULL, OPTION_NUMBER, &watch_options.max_disk},
	    {"frequency", "F", OPTION_NUMBER, &watch_options.frequency},
	    {"off-cpu", NULL, OPTION_FLAG, &watch_options.off_cpu},
	    {NULL, NULL, OPTION_FLAG, NULL},
	};
	enum options_result parsed =
	    options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);
	struct sockaddr_storage address;
	struct MHD_Daemon *daemon;
	bool is_loopback = false;
	sigset_t stop_signals;
	size_t extra = positionals.count;
	int signal_number, watch_status;
	const char *stray;

	string_list_clear(&positionals);
	if (parsed != OPTIONS_PARSED)
		return options_exit_status(parsed);
	if (extra || port < 0 || port > 65535 ||
	    !make_address(address_text, (unsigned)port, &address, &is_loopback)) {
		report_error("serve takes -address IP (numeric) and -port 0-65535 (see profcpu "
			     "serve --help)");
		return 2;
	}
	if (!watch_options.target && (stray = serve_watch_options_stray(&watch_options))) {
		report_error("serve's %s is an option of its watch: give --watch PID too", stray);
		return 2;
	}
	if (watch_options.target && (watch_status = serve_watch_options_resolve(&watch_options)))
		return watch_status;
	server.token = read_token(token_file);
	if (!is_loopback && !server.token) {
		report_error("serve listens on %s, beyond loopback: set a token (-token-file "
			     "FILE or $PROFCPU_SERVE_TOKEN) that every request must send",
			     address_text);
		return 2;
	}
	if (!load_microhttpd()) {
		free(server.token);
		return 1;
	}
	if (mkdir(server.output_dir, 0755) < 0 && errno != EEXIST) {
		report_error("cannot create the output folder %s: %s", server.output_dir,
			     strerror(errno));
		return 1;
	}
	/* The server's threads inherit this mask: only sigwait below sees
	 * SIGINT and SIGTERM. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	if (watch_options.target &&
	    !(server.watch = serve_watch_start(&watch_options, server.output_dir, &watch_status))) {
		free(server.token);
		return watch_status;
	}
	daemon = mhd.MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
		(address.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
	    (uint16_t)port, NULL, NULL, answer, &server, MHD_OPTION_SOCK_ADDR, &address,
	    MHD_OPTION_CONNECTION_LIMIT, 32u, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
	if (!daemon) {
		report_error("cannot listen on %s port %ld: %s", address_text, port,
			     strerror(errno));
		serve_watch_stop(server.watch);
		free(server.token);
		return 1;
	}
	printf("profcpu serve: listening on %s port %u%s, captures kept in %s\n", address_text,
	       (unsigned)mhd.MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT)->port,
	       server.token ? " (token required)" : "", server.output_dir);
	if (server.watch)
		printf("profcpu serve: watching pid %ld (GET /watch, POST /watch/trigger)\n",
		       watch_options.pid);
	fflush(stdout);
	while (sigwait(&stop_signals, &signal_number) != 0)
		;
	printf("profcpu serve: stopping on %s\n", strsignal(signal_number));
	fflush(stdout);
	/* A running capture stops early and writes what it collected; stopping
	 * the daemon waits for that. */
	pthread_mutex_lock(&server.lock);
	if (server.capturing)
		capture_stop(&server.capture);
	pthread_mutex_unlock(&server.lock);
	mhd.MHD_stop_daemon(daemon);
	/* The watch writes the capture under way, then ends. */
	serve_watch_stop(server.watch);
	free(server.token);
	return 0;
}
