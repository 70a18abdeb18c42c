#include "http_client.h"
#include "library_loader.h"

#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <wget.h>

/* libwget is opened by the first request (library_loader.h): with GnuTLS
 * and a dozen libraries more it cost every command 2 ms to start, and most
 * runs send no request. */
#define LIBWGET_FUNCTIONS(X)                                                                       \
	X(wget_buffer_alloc)                                                                       \
	X(wget_buffer_free)                                                                        \
	X(wget_http_abort_connection)                                                              \
	X(wget_http_add_header)                                                                    \
	X(wget_http_close)                                                                         \
	X(wget_http_create_request)                                                                \
	X(wget_http_free_request)                                                                  \
	X(wget_http_free_response)                                                                 \
	X(wget_http_get_response)                                                                  \
	X(wget_http_open)                                                                          \
	X(wget_http_parse_response_header)                                                         \
	X(wget_http_request_to_buffer)                                                             \
	X(wget_http_request_set_body)                                                              \
	X(wget_http_request_set_body_cb)                                                           \
	X(wget_http_request_set_header_cb)                                                         \
	X(wget_http_send_request)                                                                  \
	X(wget_iri_escape)                                                                         \
	X(wget_iri_free)                                                                           \
	X(wget_iri_parse)                                                                          \
	X(wget_iri_relative_to_abs)                                                                \
	X(wget_ssl_deinit)                                                                         \
	X(wget_ssl_set_config_int)                                                                 \
	X(wget_ssl_set_config_string)                                                              \
	X(wget_tcp_set_connect_timeout)                                                            \
	X(wget_tcp_set_dns_caching)                                                                \
	X(wget_tcp_set_timeout)                                                                    \
	X(wget_tcp_connect)                                                                        \
	X(wget_tcp_deinit)                                                                         \
	X(wget_tcp_init)                                                                           \
	X(wget_tcp_read)                                                                           \
	X(wget_tcp_set_ssl)                                                                        \
	X(wget_tcp_set_ssl_hostname)                                                               \
	X(wget_tcp_tls_start)                                                                      \
	X(wget_tcp_write)

static struct {
	bool loaded;
	char why[192]; /* why it is not */
	LIBWGET_FUNCTIONS(LIBRARY_FUNCTION_POINTER)
} lib;

/* The proxies of the environment, read once (http_client.h). */
static struct {
	wget_iri_t *http, *https; /* http_proxy, https_proxy (or upper case); NULL: none */
	char *no_proxy;		  /* no_proxy, NO_PROXY; NULL: none */
} proxies;

/* The variable `name` in lower case, else in upper case (curl's and
 * wget's order), or NULL when neither is set to something. */
static const char *proxy_variable(const char *name)
{
	char upper[32];
	const char *value = getenv(name);
	size_t i;

	if (value && *value)
		return value;
	for (i = 0; name[i] && i + 1 < sizeof(upper); i++)
		upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	upper[i] = '\0';
	value = getenv(upper);
	return value && *value ? value : NULL;
}

/* The proxy URL in `value` (NULL: none), parsed; without a scheme it is
 * http://HOST:PORT, as curl takes it. */
static wget_iri_t *parse_proxy(const char *value)
{
	char *url = NULL;
	wget_iri_t *proxy = NULL;

	if (!value)
		return NULL;
	if (strstr(value, "://"))
		url = strdup(value);
	else if (asprintf(&url, "http://%s", value) < 0)
		url = NULL;
	if (url)
		proxy = lib.wget_iri_parse(url, NULL);
	free(url);
	return proxy;
}

/* Proxies are this file's own (proxy_exchange), not libwget's: libwget
 * 1.99 leaves the port out of a proxied request's URL and speaks TLS to an
 * HTTPS proxy instead of tunnelling through it. */
static void read_proxies(void)
{
	const char *no_proxy = proxy_variable("no_proxy");

	proxies.no_proxy = no_proxy ? strdup(no_proxy) : NULL;
	proxies.http = parse_proxy(proxy_variable("http_proxy"));
	proxies.https = parse_proxy(proxy_variable("https_proxy"));
}

/* Whether no_proxy names `host`: "*", the host itself, or a domain it is
 * in ("example.com" and ".example.com" both take api.example.com). */
static bool bypasses_proxy(const char *host)
{
	size_t host_length = strlen(host);

	for (const char *entry = proxies.no_proxy; entry && *entry;) {
		size_t length = strcspn(entry, ", ");

		if (length) {
			const char *name = entry[0] == '.' ? entry + 1 : entry;
			size_t name_length = length - (size_t)(name - entry);

			if ((name_length == 1 && name[0] == '*') ||
			    (host_length == name_length && !strncasecmp(host, name, name_length)) ||
			    (host_length > name_length &&
			     host[host_length - name_length - 1] == '.' &&
			     !strncasecmp(host + host_length - name_length, name, name_length)))
				return true;
		}
		entry += length;
		entry += strspn(entry, ", ");
	}
	return false;
}

/* Opens libwget, and sets its defaults once: certificates checked without
 * asking OCSP responders (curl does not either), HTTP/1.1 only (libwget
 * 1.99's HTTP/2 sends every request as a GET), no DNS cache kept after the
 * request. */
static void load_once(void)
{
#define ENTRY(name) LIBRARY_FUNCTION_ENTRY(lib, name)
	const struct library_function functions[] = {LIBWGET_FUNCTIONS(ENTRY)};
#undef ENTRY

	if (!library_load("libwget.so.0", "libwget0", functions,
			  sizeof(functions) / sizeof(*functions), lib.why, sizeof(lib.why)))
		return;
	lib.wget_ssl_set_config_int(WGET_SSL_OCSP, 0);
	lib.wget_ssl_set_config_string(WGET_SSL_ALPN, "http/1.1");
	lib.wget_tcp_set_dns_caching(NULL, 0);
	read_proxies();
	lib.loaded = true;
}

static bool load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load_once);
	return lib.loaded;
}

struct http_connection {
	wget_http_connection_t *connection;
	char *origin; /* "scheme://host:port" it was opened to */
};

/* One request on one connection. */
struct exchange {
	const struct http_request *request;
	wget_http_connection_t *connection;
	bool may_follow;       /* a redirection of this hop is followed: its body is no answer */
	bool redirected;       /* this hop goes where a redirection sent it */
	bool stopped;	       /* by the sink, whose reason is in `why` */
	bool length_announced; /* by Content-Length: libwget overwrites it with what came */
	size_t announced_length, received_length;
	char *why;
	size_t why_size;
};

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

static int note_length(wget_http_response_t *response, void *context)
{
	struct exchange *exchange = context;

	exchange->length_announced = response->content_length_valid;
	exchange->announced_length = response->content_length;
	return 0;
}

static int pass_body(wget_http_response_t *response, void *context, const char *data, size_t size)
{
	struct exchange *exchange = context;
	const struct http_request *request = exchange->request;

	exchange->received_length += size;
	if (exchange->may_follow && response->code / 100 == 3 && response->location)
		return 0;
	if (!exchange->stopped && request->sink &&
	    !request->sink(request->sink_context, data, size, exchange->why, exchange->why_size)) {
		exchange->stopped = true;
		if (exchange->connection) /* none through a tunnel, which checks `stopped` */
			lib.wget_http_abort_connection(exchange->connection);
	}
	return 0;
}

/* Why the connection to `iri` failed, from wget_http_open's code. */
static void describe_open_failure(int code, const wget_iri_t *iri, char *why, size_t why_size)
{
	switch (code) {
	case WGET_E_TIMEOUT:
		snprintf(why, why_size, "no connection to %s:%u in time", iri->host, iri->port);
		break;
	case WGET_E_CERTIFICATE:
		snprintf(
		    why, why_size,
		    "the certificate of %s is not trusted by /etc/ssl/certs/ca-certificates.crt",
		    iri->host);
		break;
	case WGET_E_HANDSHAKE:
		snprintf(why, why_size, "the TLS handshake with %s:%u failed", iri->host,
			 iri->port);
		break;
	default:
		snprintf(why, why_size, "cannot connect to %s:%u", iri->host, iri->port);
	}
}

static bool open_connection(struct exchange *exchange, const wget_iri_t *iri)
{
	int code = lib.wget_http_open(&exchange->connection, iri);

	if (code != WGET_E_SUCCESS)
		describe_open_failure(code, iri, exchange->why, exchange->why_size);
	return code == WGET_E_SUCCESS;
}

/* The request to `iri`: its headers (not to where a redirection sent it)
 * and body. NULL, with `why` written, when out of memory. */
static wget_http_request_t *build_message(struct exchange *exchange, const wget_iri_t *iri)
{
	const struct http_request *request = exchange->request;
	wget_http_request_t *message = lib.wget_http_create_request(iri, request->method);

	lib.wget_http_add_header(message, "User-Agent", "profcpu/" PROFCPU_VERSION);
	for (size_t i = 0; !exchange->redirected && i < request->header_count; i++)
		lib.wget_http_add_header(message, request->headers[i].name,
					 request->headers[i].value);
	if (request->body) {
		char *body = malloc(request->body_size ? request->body_size : 1);

		if (!body) {
			snprintf(exchange->why, exchange->why_size, "out of memory");
			lib.wget_http_free_request(&message);
			return NULL;
		}
		memcpy(body, request->body, request->body_size);
		lib.wget_http_request_set_body(message, request->content_type, body,
					       request->body_size); /* the message frees it */
	}
	return message;
}

/* One request to `iri` on the open exchange->connection, begun at `start`.
 * Returns the response (also one cut short), or NULL with `why` written. */
static wget_http_response_t *request_once(struct exchange *exchange, const wget_iri_t *iri,
					  const struct timespec *start)
{
	const struct http_request *request = exchange->request;
	wget_http_request_t *message = build_message(exchange, iri);
	wget_http_response_t *response = NULL;

	if (!message)
		return NULL;
	exchange->length_announced = false;
	exchange->received_length = 0;
	lib.wget_http_request_set_header_cb(message, note_length, exchange);
	lib.wget_http_request_set_body_cb(message, pass_body, exchange);
	errno = 0;
	if (lib.wget_http_send_request(exchange->connection, message) != 0) {
		/* A refused connection shows here: the socket connects as it sends. */
		if (errno && seconds_since(start) * 1000 < request->timeout_ms)
			snprintf(exchange->why, exchange->why_size, "cannot connect to %s:%u: %s",
				 iri->host, iri->port, strerror(errno));
		else
			snprintf(exchange->why, exchange->why_size,
				 "no connection to %s:%u in time", iri->host, iri->port);
	} else if (!(response = lib.wget_http_get_response(exchange->connection))) {
		if (seconds_since(start) * 1000 >= request->timeout_ms)
			snprintf(exchange->why, exchange->why_size, "no answer from %s in %.1f s",
				 iri->host, request->timeout_ms / 1000.0);
		else
			snprintf(exchange->why, exchange->why_size,
				 "%s closed the connection without an answer", iri->host);
	}
	lib.wget_http_free_request(&message);
	return response;
}

/* What came from a tunnel and is not used yet. */
struct tunnel_input {
	wget_tcp_t *tcp;
	char data[16384];
	size_t start, end;
};

/* Reads more into `input` (moving what is left to the front). False at the
 * end of the stream, after the timeout or when full. */
static bool read_more(struct tunnel_input *input)
{
	ssize_t got;

	memmove(input->data, input->data + input->start, input->end - input->start);
	input->end -= input->start;
	input->start = 0;
	if (input->end + 1 >= sizeof(input->data))
		return false;
	got = lib.wget_tcp_read(input->tcp, input->data + input->end,
				sizeof(input->data) - 1 - input->end);
	if (got <= 0)
		return false;
	input->end += (size_t)got;
	input->data[input->end] = '\0';
	return true;
}

/* The next HTTP head or chunk-size line from `input`, ending with
 * `terminator` (which is cut off): NUL-terminated in place, or NULL. */
static char *read_through(struct tunnel_input *input, const char *terminator)
{
	char *found;

	input->data[input->end] = '\0';
	while (!(found = strstr(input->data + input->start, terminator)))
		if (!read_more(input))
			return NULL;
	*found = '\0';
	found = input->data + input->start;
	input->start = (size_t)(strchr(found, '\0') - input->data) + strlen(terminator);
	return found;
}

/* Hands up to `wanted` bytes of the body to the sink (SIZE_MAX: until the
 * server closes). False when the sink stopped or the stream ended early. */
static bool pass_bytes(struct exchange *exchange, wget_http_response_t *response,
		       struct tunnel_input *input, size_t wanted)
{
	while (wanted && !exchange->stopped) {
		size_t size = input->end - input->start;

		if (!size) {
			if (!read_more(input))
				return wanted == SIZE_MAX;
			continue;
		}
		if (size > wanted)
			size = wanted;
		pass_body(response, exchange, input->data + input->start, size);
		input->start += size;
		if (wanted != SIZE_MAX)
			wanted -= size;
	}
	return !exchange->stopped;
}

/* The answer's body, by Content-Length, chunks or until the server closes. */
static void read_tunnel_body(struct exchange *exchange, wget_http_response_t *response,
			     struct tunnel_input *input)
{
	if (!strcmp(exchange->request->method, "HEAD") || response->code / 100 == 1 ||
	    response->code == 204 || response->code == 304)
		return;
	if (response->transfer_encoding == transfer_encoding_chunked) {
		for (;;) {
			char *line = read_through(input, "\r\n");
			size_t size;

			if (!line || sscanf(line, "%zx", &size) != 1 || size == 0 ||
			    !pass_bytes(exchange, response, input, size) ||
			    !read_through(input, "\r\n"))
				return;
		}
	}
	pass_bytes(exchange, response, input,
		   response->content_length_valid ? response->content_length : SIZE_MAX);
}

/* Opens the way to `iri` through `proxy` on `input->tcp`: for https, a
 * CONNECT tunnel with TLS to the server inside it (its certificate checked
 * as without a proxy); for http, the connection to the proxy. False with
 * `why` written. */
static bool open_through_proxy(struct exchange *exchange, const wget_iri_t *iri,
			       const wget_iri_t *proxy, struct tunnel_input *input)
{
	bool tls = !strcmp(iri->scheme, "https");
	const char *variable = tls ? "https_proxy" : "http_proxy";
	char connect[768], *head;
	int code = 0, length = 0;

	if (tls)
		length = snprintf(connect, sizeof(connect),
				  "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n"
				  "User-Agent: profcpu/" PROFCPU_VERSION "\r\n\r\n",
				  iri->host, iri->port, iri->host, iri->port);
	if (lib.wget_tcp_connect(input->tcp, proxy->host, proxy->port) != WGET_E_SUCCESS ||
	    length >= (int)sizeof(connect) ||
	    (tls && lib.wget_tcp_write(input->tcp, connect, (size_t)length) != length)) {
		snprintf(exchange->why, exchange->why_size,
			 "cannot connect to the proxy %s:%u (%s)", proxy->host, proxy->port,
			 variable);
		return false;
	}
	if (!tls)
		return true;
	if (!(head = read_through(input, "\r\n\r\n")) ||
	    sscanf(head, "HTTP/%*d.%*d %d", &code) != 1 || code != 200) {
		snprintf(exchange->why, exchange->why_size,
			 code ? "the proxy %s:%u (%s) refused to tunnel to %s:%u: HTTP %d"
			      : "the proxy %s:%u (%s) did not answer CONNECT %s:%u",
			 proxy->host, proxy->port, variable, iri->host, iri->port, code);
		return false;
	}
	lib.wget_tcp_set_ssl(input->tcp, 1);
	lib.wget_tcp_set_ssl_hostname(input->tcp, iri->host);
	if ((code = lib.wget_tcp_tls_start(input->tcp)) != WGET_E_SUCCESS) {
		describe_open_failure(code, iri, exchange->why, exchange->why_size);
		return false;
	}
	return true;
}

/* The request as it goes on the wire (malloc'd): through a tunnel as to
 * the server, to an HTTP proxy with its absolute URL
 * ("POST http://host:port/path"). NULL with `why` written. */
static char *request_bytes(struct exchange *exchange, const wget_iri_t *iri, bool absolute,
			   size_t *size)
{
	wget_http_request_t *message = build_message(exchange, iri);
	wget_buffer_t *buffer = message ? lib.wget_buffer_alloc(1024) : NULL;
	char *bytes = NULL;
	const char *space;

	if (buffer && lib.wget_http_request_to_buffer(message, buffer, 0) >= 0 &&
	    (space = memchr(buffer->data, ' ', buffer->length))) {
		size_t method = (size_t)(space - buffer->data), skipped = absolute ? 1 : 0;
		char url[600];
		int url_length =
		    absolute ? snprintf(url, sizeof(url), " http://%s:%u", iri->host, iri->port)
			     : 0;

		/* The body may hold any byte: copied, never printed. */
		if (url_length >= 0 && (size_t)url_length < sizeof(url) &&
		    (bytes = malloc(buffer->length + (size_t)url_length))) {
			memcpy(bytes, buffer->data, method);
			memcpy(bytes + method, url, (size_t)url_length);
			memcpy(bytes + method + (size_t)url_length, space + skipped,
			       buffer->length - method - skipped);
			*size = buffer->length + (size_t)url_length - skipped;
		}
	}
	if (!bytes)
		snprintf(exchange->why, exchange->why_size, "out of memory");
	lib.wget_buffer_free(&buffer);
	if (message)
		lib.wget_http_free_request(&message);
	return bytes;
}

/* One request to `iri` through `proxy` (http_proxy or https_proxy, on a
 * connection of its own). Returns as request_once. */
static wget_http_response_t *proxy_exchange(struct exchange *exchange, const wget_iri_t *iri,
					    const wget_iri_t *proxy)
{
	bool tls = !strcmp(iri->scheme, "https");
	struct tunnel_input *input = calloc(1, sizeof(*input));
	wget_http_response_t *response = NULL;
	char *request = NULL, *head;
	size_t size = 0;

	if (!input) {
		snprintf(exchange->why, exchange->why_size, "out of memory");
		return NULL;
	}
	input->tcp = lib.wget_tcp_init();
	if (!open_through_proxy(exchange, iri, proxy, input) ||
	    !(request = request_bytes(exchange, iri, !tls, &size)))
		goto done;
	if (lib.wget_tcp_write(input->tcp, request, size) != (ssize_t)size) {
		snprintf(exchange->why, exchange->why_size,
			 "the connection to %s:%u through the proxy %s:%u closed", iri->host,
			 iri->port, proxy->host, proxy->port);
		goto done;
	}
	exchange->length_announced = false;
	exchange->received_length = 0;
	if (!(head = read_through(input, "\r\n\r\n")) ||
	    !(response = lib.wget_http_parse_response_header(head))) {
		snprintf(exchange->why, exchange->why_size,
			 "no answer from %s through the proxy %s:%u in %.1f s", iri->host,
			 proxy->host, proxy->port, exchange->request->timeout_ms / 1000.0);
		goto done;
	}
	note_length(response, exchange);
	read_tunnel_body(exchange, response, input);
done:
	free(request);
	lib.wget_tcp_deinit(&input->tcp);
	free(input);
	return response;
}

/* "scheme://host:port" of `iri` (malloc'd): whom a connection goes to. */
static char *origin_of(const wget_iri_t *iri)
{
	char *origin = NULL;

	if (asprintf(&origin, "%s://%s:%u", iri->scheme, iri->host, (unsigned)iri->port) < 0)
		return NULL;
	return origin;
}

/* One request to `iri`, no redirection followed: on the connection kept in
 * `*keep` when it goes to the same server (which may have closed it while
 * idle: then on a new one), else on a new one. Returns as request_once. */
static wget_http_response_t *exchange_once(struct exchange *exchange, const wget_iri_t *iri,
					   struct http_connection **keep)
{
	char *origin = keep ? origin_of(iri) : NULL;
	bool reused = keep && *keep && origin && !strcmp((*keep)->origin, origin);
	wget_http_response_t *response;
	const wget_iri_t *proxy;
	struct timespec start;

	free(origin);
	clock_gettime(CLOCK_MONOTONIC, &start);
	exchange->connection = NULL;
	proxy = !strcmp(iri->scheme, "https") ? proxies.https : proxies.http;
	if (proxy && !bypasses_proxy(iri->host)) {
		http_connection_close(keep); /* a connection through a proxy is not kept */
		return proxy_exchange(exchange, iri, proxy);
	}
	if (reused) {
		exchange->connection = (*keep)->connection;
		(*keep)->connection = NULL;
	}
	http_connection_close(keep);
	if (!reused && !open_connection(exchange, iri))
		return NULL;
	response = request_once(exchange, iri, &start);
	/* Nothing came back at once: the server closed the kept connection
	 * (its idle timeout, or one request a connection). Not after a
	 * silence, which another try would only double. */
	if (!response && reused && exchange->received_length == 0 && !exchange->stopped &&
	    seconds_since(&start) * 1000 < exchange->request->timeout_ms) {
		lib.wget_http_close(&exchange->connection);
		clock_gettime(CLOCK_MONOTONIC, &start);
		if (!open_connection(exchange, iri))
			return NULL;
		response = request_once(exchange, iri, &start);
	}
	return response;
}

/* Leaves the exchange's connection to `iri` in `*keep` for the next
 * request (closes it when there is nowhere to keep it). */
static void keep_connection(struct exchange *exchange, const wget_iri_t *iri,
			    struct http_connection **keep)
{
	struct http_connection *kept =
	    keep && exchange->connection ? calloc(1, sizeof(*kept)) : NULL;

	if (kept && (kept->origin = origin_of(iri))) {
		kept->connection = exchange->connection;
		exchange->connection = NULL;
		*keep = kept;
		return;
	}
	free(kept);
	lib.wget_http_close(&exchange->connection);
}

/* Whether the answer came whole; otherwise `why` says what happened. */
static bool complete(const struct exchange *exchange)
{
	if (exchange->stopped)
		return false;
	if (exchange->length_announced && exchange->received_length < exchange->announced_length) {
		snprintf(exchange->why, exchange->why_size,
			 "the answer was cut short after %zu of %zu bytes",
			 exchange->received_length, exchange->announced_length);
		return false;
	}
	return true;
}

static bool is_web_url(const wget_iri_t *iri)
{
	return iri && iri->scheme && iri->host &&
	       (!strcmp(iri->scheme, "http") || !strcmp(iri->scheme, "https"));
}

/* The request, following redirections; runs with SIGPIPE blocked. */
static bool send_following(struct exchange *exchange, int *status)
{
	const struct http_request *request = exchange->request;
	wget_iri_t *iri = lib.wget_iri_parse(request->url, NULL);
	bool answered = false;

	for (int redirects = 0;; redirects++) {
		wget_http_response_t *response;
		wget_buffer_t *location;

		if (!is_web_url(iri)) {
			snprintf(exchange->why, exchange->why_size, "not an http(s) URL");
			break;
		}
		exchange->may_follow = redirects < request->max_redirects;
		exchange->redirected = redirects > 0;
		/* The kept connection serves the request's own URL, not where it
		 * is sent on to. */
		response = exchange_once(exchange, iri, redirects == 0 ? request->keep : NULL);
		if (!response || !complete(exchange)) {
			lib.wget_http_close(&exchange->connection);
			if (response) {
				*status = response->code;
				lib.wget_http_free_response(&response);
			}
			break;
		}
		*status = response->code;
		if (response->code / 100 != 3 || !response->location || !exchange->may_follow) {
			/* An HTTP/1.0 server closes after each answer. */
			if (redirects == 0 &&
			    (response->major > 1 || response->minor > 0 || response->keep_alive))
				keep_connection(exchange, iri, request->keep);
			else
				lib.wget_http_close(&exchange->connection);
			lib.wget_http_free_response(&response);
			answered = true;
			break;
		}
		lib.wget_http_close(&exchange->connection);
		location = lib.wget_buffer_alloc(256);
		lib.wget_iri_relative_to_abs(iri, response->location, strlen(response->location),
					     location);
		lib.wget_http_free_response(&response);
		lib.wget_iri_free(&iri);
		iri = lib.wget_iri_parse(location->data, NULL);
		lib.wget_buffer_free(&location);
	}
	lib.wget_iri_free(&iri);
	return answered;
}

bool http_send(const struct http_request *request, int *status, char *why, size_t why_size)
{
	struct exchange exchange = {.request = request, .why = why, .why_size = why_size};
	sigset_t pipe_signal, saved;
	bool answered;

	*status = 0;
	if (!load()) {
		snprintf(why, why_size, "%s", lib.why);
		return false;
	}
	lib.wget_tcp_set_timeout(NULL, request->timeout_ms);
	lib.wget_tcp_set_connect_timeout(NULL, request->timeout_ms);
	why[0] = '\0';
	/* libwget writes to sockets without MSG_NOSIGNAL: a server that goes
	 * away must not raise SIGPIPE, which collect takes as "stop". */
	sigemptyset(&pipe_signal);
	sigaddset(&pipe_signal, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_signal, &saved);
	answered = send_following(&exchange, status);
	if (!sigismember(&saved, SIGPIPE)) {
		const struct timespec now = {0, 0};

		while (sigtimedwait(&pipe_signal, NULL, &now) > 0) /* drop what the socket raised */
			;
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
	}
	return answered;
}

char *http_escape(const char *text)
{
	wget_buffer_t *buffer;
	char *escaped;

	if (!load())
		return NULL;
	buffer = lib.wget_buffer_alloc(strlen(text) * 3 + 1);
	lib.wget_iri_escape(text, buffer);
	escaped = strdup(buffer->data);
	lib.wget_buffer_free(&buffer);
	return escaped;
}

void http_connection_close(struct http_connection **connection)
{
	if (!connection || !*connection)
		return;
	if ((*connection)->connection)
		lib.wget_http_close(&(*connection)->connection);
	free((*connection)->origin);
	free(*connection);
	*connection = NULL;
}

char *http_redact_url(const char *url)
{
	const char *authority = strstr(url, "://"), *at = NULL;
	char *redacted;

	if (authority) {
		authority += 3;
		for (const char *c = authority; *c && !strchr("/?#", *c); c++)
			if (*c == '@')
				at = c;
	}
	if (!at)
		return strdup(url);
	if (asprintf(&redacted, "%.*s%s", (int)(authority - url), url, at + 1) < 0)
		return NULL;
	return redacted;
}

void http_client_cleanup(void)
{
	if (lib.loaded)
		lib.wget_ssl_deinit();
}
