#include "eventpipe_session.h"
#include "diagnostics_ipc.h"
#include "dotnet_diagnostics.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The EventPipe command set of the diagnostics IPC. */
#define EVENTPIPE_COMMANDS 0x02
#define STOP_TRACING	   0x01
#define COLLECT_TRACING_2  0x03
#define FORMAT_NETTRACE	   1
#define BUFFER_MEGABYTES   256 /* the runtime's cap; it allocates as needed */
#define MAX_REQUEST	   4096
#define STOP_GRACE_SECONDS 15 /* the rundown of a large app takes seconds */

struct eventpipe_session {
	const struct target_process *target;
	int socket_handle; /* O_PATH handle of the diagnostics socket */
	int stream;	   /* the connection the events come through */
	int output;
	uint64_t id;
	pthread_t streamer;
	atomic_bool stream_ended;
	uint64_t bytes_written, max_bytes; /* max_bytes 0: no bound */
	struct eventpipe_budget *budget;   /* NULL: none */
	const char *bounded_by;		   /* the bound that cut the stream short, or NULL */
	int write_error;		   /* errno of a failed write, 0 if none */
	char path[];
};

/* A connection to the socket behind `socket_handle`, with send and receive
 * bounded by `timeout_seconds` (0: receive without a bound), or -1. */
static int connect_to_runtime(int socket_handle, int timeout_seconds)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	struct timeval timeout = {.tv_sec = timeout_seconds ? timeout_seconds : 3};
	int connection = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (connection < 0)
		return -1;
	/* The handle's /proc/self/fd link reaches exactly the socket that was
	 * opened inside the target's root. */
	snprintf(address.sun_path, sizeof(address.sun_path), "/proc/self/fd/%d", socket_handle);
	setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
	if (timeout_seconds)
		setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	if (connect(connection, (struct sockaddr *)&address, sizeof(address)) < 0) {
		int error = errno;

		close(connection);
		errno = error;
		return -1;
	}
	return connection;
}

/* Reads the reply to a command: its header and payload, up to
 * `payload_size` bytes of it into `payload`. Returns 0 for OK, 1 for an
 * error reply (its code in *error_code), -1 with a reason in `why`. */
static int read_reply(int connection, void *payload, size_t payload_size, uint32_t *error_code,
		      char *why, size_t why_size)
{
	struct ipc_header header;
	uint8_t body[64] = {0};
	ssize_t received = recv(connection, &header, sizeof(header), MSG_WAITALL);
	size_t body_size;

	if (received < 0) {
		snprintf(why, why_size, "no answer on the diagnostics socket (%s)",
			 strerror(errno));
		return -1;
	}
	if ((size_t)received < sizeof(header) || memcmp(header.magic, IPC_MAGIC, 14) ||
	    header.command_set != SERVER_RESPONSE || header.size < sizeof(header) ||
	    header.size - sizeof(header) > sizeof(body)) {
		snprintf(why, why_size, "the runtime gave no valid answer");
		return -1;
	}
	body_size = header.size - sizeof(header);
	if (body_size && recv(connection, body, body_size, MSG_WAITALL) != (ssize_t)body_size) {
		snprintf(why, why_size, "the runtime's answer was cut short");
		return -1;
	}
	if (header.command_id != RESPONSE_OK) {
		memcpy(error_code, body, sizeof(*error_code));
		return 1;
	}
	if (body_size < payload_size) {
		snprintf(why, why_size, "the runtime's answer was cut short");
		return -1;
	}
	memcpy(payload, body, payload_size);
	return 0;
}

/* Appends to a request buffer, never past its end. */
struct request {
	uint8_t bytes[MAX_REQUEST];
	size_t length;
	bool overflow;
};

static void put(struct request *request, const void *data, size_t size)
{
	if (request->length + size > sizeof(request->bytes)) {
		request->overflow = true;
		return;
	}
	memcpy(request->bytes + request->length, data, size);
	request->length += size;
}

static void put_u32(struct request *request, uint32_t value)
{
	put(request, &value, sizeof(value));
}

/* The protocol's string: a count of UTF-16 units with the terminator, then
 * the units; NULL is a count of 0. Provider names are ASCII. */
static void put_string(struct request *request, const char *text)
{
	size_t length = text ? strlen(text) + 1 : 0;

	put_u32(request, (uint32_t)length);
	for (size_t i = 0; i < length; i++) {
		uint16_t unit = (unsigned char)text[i];

		put(request, &unit, sizeof(unit));
	}
}

static void build_collect_request(const struct eventpipe_config *config, struct request *request)
{
	struct ipc_header header = {IPC_MAGIC, 0, EVENTPIPE_COMMANDS, COLLECT_TRACING_2, 0};
	uint8_t rundown = config->rundown;

	put(request, &header, sizeof(header));
	put_u32(request, BUFFER_MEGABYTES);
	put_u32(request, FORMAT_NETTRACE);
	put(request, &rundown, 1);
	put_u32(request, (uint32_t)config->provider_count);
	for (size_t i = 0; i < config->provider_count; i++) {
		put(request, &config->providers[i].keywords, sizeof(uint64_t));
		put_u32(request, config->providers[i].level);
		put_string(request, config->providers[i].name);
		put_string(request,
			   config->providers[i].filter[0] ? config->providers[i].filter : NULL);
	}
	((struct ipc_header *)request->bytes)->size = (uint16_t)request->length;
}

/* Sends CollectTracing2 and reads the session id; the stream follows on
 * `connection`. Returns 0, or -1 with a reason in `why`. */
static int request_session(int connection, const struct eventpipe_config *config, uint64_t *id,
			   char *why, size_t why_size)
{
	struct request request = {0};
	uint32_t code = 0;
	int status;

	build_collect_request(config, &request);
	if (request.overflow) {
		snprintf(why, why_size, "the provider list is too long for one request");
		return -1;
	}
	if (send(connection, request.bytes, request.length, MSG_NOSIGNAL) !=
	    (ssize_t)request.length) {
		snprintf(why, why_size, "the diagnostics socket: %s", strerror(errno));
		return -1;
	}
	status = read_reply(connection, id, sizeof(*id), &code, why, why_size);
	if (status == 1 && code == UNKNOWN_COMMAND)
		snprintf(why, why_size, "the runtime has no EventPipe (older than .NET Core 3.0)");
	else if (status == 1)
		snprintf(why, why_size, "the runtime refused the session (error 0x%08x)", code);
	return status == 0 ? 0 : -1;
}

/* Whether `length` bytes more may be written: within the session's own
 * bound, and its budget's (drawn from it). Says which bound when not. */
static bool within_bounds(struct eventpipe_session *session, uint64_t length)
{
	struct eventpipe_budget *budget = session->budget;
	uint64_t total = session->bytes_written + length, beyond_own, used;

	if (session->max_bytes && total > session->max_bytes) {
		session->bounded_by = "its own bound";
		return false;
	}
	if (!budget || total <= budget->own_bytes)
		return true;
	beyond_own = total - (session->bytes_written > budget->own_bytes ? session->bytes_written
									 : budget->own_bytes);
	used = atomic_load(&budget->shared_used);
	do {
		if (used + beyond_own > budget->shared_bytes) {
			session->bounded_by = "the bound of all processes' events";
			return false;
		}
	} while (!atomic_compare_exchange_weak(&budget->shared_used, &used, used + beyond_own));
	return true;
}

/* The thread that copies the stream into the file until the runtime ends
 * it (after StopTracing, or when the target exits) or the connection is
 * shut down from this side. */
static void *stream_to_file(void *context)
{
	struct eventpipe_session *session = context;
	char buffer[1 << 16];
	ssize_t length;

	while ((length = recv(session->stream, buffer, sizeof(buffer), 0)) > 0 ||
	       (length < 0 && errno == EINTR)) {
		/* Past a bound, nothing more is read: the runtime drops what
		 * its buffers cannot hold, a hostile sender waits. */
		if (length > 0 && !within_bounds(session, (uint64_t)length))
			break;
		if (length < 0 || session->write_error)
			continue; /* keep draining: a full runtime buffer drops events */
		if (write(session->output, buffer, (size_t)length) != length)
			session->write_error = errno ? errno : ENOSPC;
		else
			session->bytes_written += (uint64_t)length;
	}
	atomic_store(&session->stream_ended, true);
	return NULL;
}

struct eventpipe_session *eventpipe_session_start(const struct target_process *target,
						  const struct eventpipe_config *config,
						  const char *path, FILE *log)
{
	struct eventpipe_session *session;
	char why[160] = "";
	int socket_handle, connection = -1, output;
	uint64_t id = 0;

	if (target->root_fd < 0 || !target->runs_dotnet)
		return NULL;
	socket_handle = dotnet_open_diagnostic_socket(target);
	if (socket_handle < 0)
		snprintf(why, sizeof(why),
			 "no usable diagnostics socket in its /tmp (%s; was it "
			 "started with DOTNET_EnableDiagnostics=0?)",
			 strerror(errno));
	else if ((connection = connect_to_runtime(socket_handle, 10)) < 0)
		snprintf(why, sizeof(why), "its diagnostics socket refuses connections (%s)",
			 strerror(errno));
	else if (request_session(connection, config, &id, why, sizeof(why)) == 0) {
		output = open(path,
			      O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
				  (config->private_file ? O_EXCL : O_TRUNC),
			      config->private_file ? 0600 : 0644);
		if (output < 0)
			snprintf(why, sizeof(why), "cannot write %s (%s)", path, strerror(errno));
		else {
			struct timeval no_timeout = {0};

			session = xcalloc(1, sizeof(*session) + strlen(path) + 1);
			*session = (struct eventpipe_session){.target = target,
							      .socket_handle = socket_handle,
							      .stream = connection,
							      .output = output,
							      .id = id,
							      .max_bytes = config->max_bytes,
							      .budget = config->budget};
			strcpy(session->path, path);
			setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &no_timeout,
				   sizeof(no_timeout));
			if (pthread_create(&session->streamer, NULL, stream_to_file, session) ==
			    0) {
				fprintf(log, "runtime events: EventPipe session %llu into %s\n",
					(unsigned long long)id, path);
				fflush(log); /* a watcher learns the session runs */
				return session;
			}
			snprintf(why, sizeof(why), "no thread to read the events");
			close(output);
			free(session);
		}
	}
	if (connection >= 0)
		close(connection); /* the runtime ends a session whose connection closes */
	if (socket_handle >= 0)
		close(socket_handle);
	report_warning("no runtime events (GC, exceptions, JIT) from .NET pid %d: %s; the samples "
		       "are recorded as usual",
		       (int)target->pid, why);
	return NULL;
}

static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

const char *eventpipe_session_wait(struct eventpipe_session *session, double seconds)
{
	struct sigaction on_stop = {.sa_handler = request_stop}, previous_int, previous_term;
	struct pollfd exit_watch = {.fd = session->target->pidfd, .events = POLLIN};
	const char *reason = NULL;
	struct timespec start;

	stop_requested = 0;
	sigaction(SIGINT, &on_stop, &previous_int); /* no SA_RESTART: poll returns */
	sigaction(SIGTERM, &on_stop, &previous_term);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!reason) {
		if (stop_requested)
			reason = "interrupted";
		else if (seconds > 0 && seconds_since(&start) >= seconds)
			reason = "the duration ended";
		else if (atomic_load(&session->stream_ended))
			reason = "the runtime ended the event stream";
		else if (exit_watch.fd >= 0 && poll(&exit_watch, 1, 100) > 0 &&
			 (exit_watch.revents & POLLIN))
			reason = "the target exited";
		else if (exit_watch.fd < 0)
			usleep(100 * 1000);
	}
	sigaction(SIGINT, &previous_int, NULL);
	sigaction(SIGTERM, &previous_term, NULL);
	return reason;
}

/* Sends StopTracing for the session. Returns 0, or -1 with a reason. */
static int request_stop_tracing(const struct eventpipe_session *session, char *why, size_t why_size)
{
	struct {
		struct ipc_header header;
		uint64_t id;
	} __attribute__((packed)) request = {
	    .header = {IPC_MAGIC, sizeof(request), EVENTPIPE_COMMANDS, STOP_TRACING, 0},
	    .id = session->id,
	};
	int connection = connect_to_runtime(session->socket_handle, 3), status;
	uint64_t stopped_id;
	uint32_t code = 0;

	if (connection < 0 ||
	    send(connection, &request, sizeof(request), MSG_NOSIGNAL) != (ssize_t)sizeof(request)) {
		snprintf(why, why_size, "the diagnostics socket: %s", strerror(errno));
		if (connection >= 0)
			close(connection);
		return -1;
	}
	status = read_reply(connection, &stopped_id, sizeof(stopped_id), &code, why, why_size);
	close(connection);
	if (status == 1)
		snprintf(why, why_size, "the runtime refused to stop it (error 0x%08x)", code);
	return status == 0 ? 0 : -1;
}

/* Waits for the streaming thread at most `seconds`. */
static bool join_streamer(struct eventpipe_session *session, int seconds)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += seconds;
	return pthread_timedjoin_np(session->streamer, NULL, &deadline) == 0;
}

static bool target_exited(const struct target_process *target)
{
	struct pollfd exit_watch = {.fd = target->pidfd, .events = POLLIN};

	return target->pidfd >= 0 && poll(&exit_watch, 1, 0) > 0;
}

uint64_t eventpipe_session_stop(struct eventpipe_session *session, FILE *log)
{
	char why[160];
	uint64_t bytes;

	/* A target that exited ended the stream itself. */
	if (!atomic_load(&session->stream_ended) &&
	    request_stop_tracing(session, why, sizeof(why)) < 0 &&
	    !atomic_load(&session->stream_ended) && !target_exited(session->target))
		report_warning("the EventPipe session of pid %d could not be stopped (%s): closed "
			       "its connection instead, which ends it; the rundown may be missing",
			       (int)session->target->pid, why);
	if (!join_streamer(session, STOP_GRACE_SECONDS)) {
		report_warning("the runtime of pid %d sent no end of its events in %d s: closed "
			       "the session; %s may miss its rundown",
			       (int)session->target->pid, STOP_GRACE_SECONDS, session->path);
		shutdown(session->stream, SHUT_RDWR);
		pthread_join(session->streamer, NULL);
	}
	if (session->write_error)
		report_error("writing %s failed: %s; kept what was written before", session->path,
			     strerror(session->write_error));
	if (close(session->output) < 0 && !session->write_error)
		report_error("writing %s failed: %s", session->path, strerror(errno));
	bytes = session->bytes_written;
	if (session->bounded_by)
		fprintf(log,
			"runtime events of pid %d: %s stopped at %llu bytes, %s: the "
			"session's later events are dropped\n",
			(int)session->target->pid, session->path, (unsigned long long)bytes,
			session->bounded_by);
	fprintf(log, "runtime events: %llu bytes\n", (unsigned long long)bytes);
	close(session->stream);
	close(session->socket_handle);
	free(session);
	return bytes;
}
