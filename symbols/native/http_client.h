/* HTTP and HTTPS requests, made with GNU wget2's library (Debian's
 * libwget0), loaded by the first request. It shares GnuTLS with
 * libmicrohttpd (profcpu serve), so the sidecar image carries one TLS stack;
 * certificates are checked against the system's CA certificates
 * (/etc/ssl/certs/ca-certificates.crt). Requests speak HTTP/1.1, through
 * the proxy that http_proxy or https_proxy (or HTTP_PROXY, HTTPS_PROXY)
 * names unless no_proxy (NO_PROXY) names the host: an http:// request sent
 * to the proxy with its absolute URL, an https:// one through a CONNECT
 * tunnel; such a connection is not kept. Used by the symbol server
 * downloads, the Pyroscope push and the OTLP export. */
#ifndef PROFCPU_HTTP_CLIENT_H
#define PROFCPU_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

/* Takes each piece of the answer's body; returns false to stop the transfer
 * (the request then fails with the reason the sink wrote in `why`). */
typedef bool http_body_sink(void *context, const char *data, size_t size, char *why,
			    size_t why_size);

/* A connection kept open from one request to the next (HTTP/1.1
 * keep-alive), to the scheme, host and port it was opened to: many
 * requests to one server pay one TCP (and TLS) set-up. */
struct http_connection;

struct http_header {
	const char *name, *value;
};

struct http_request {
	const char *method;	  /* "GET" or "POST" */
	const char *url;	  /* http:// or https:// */
	const char *content_type; /* of `body`, NULL without one */
	const void *body;
	size_t body_size;
	/* Sent to the request's own URL, not where a redirection sends it on
	 * (they may hold credentials). */
	const struct http_header *headers;
	size_t header_count;
	int timeout_ms;	   /* to connect, and at most between two pieces of the answer */
	int max_redirects; /* 3xx answers followed to http(s) URLs; 0: none */
	http_body_sink *sink;
	void *sink_context;
	/* NULL: a connection for this request alone. Else where the
	 * connection is kept (NULL at first): the request goes on it when it
	 * is to the same server, and leaves it there for the next one. A kept
	 * connection the server has closed since (its idle timeout) is opened
	 * again and the request sent once more. */
	struct http_connection **keep;
};

/* Sends `request`. True when the server answered whole: its HTTP status is
 * in `*status` (also 4xx and 5xx) and its body went to the sink. False when
 * no whole answer came, with one phrase in `why` (the server cannot be
 * reached, the certificate is not trusted, no answer in time, the answer was
 * cut short, the sink stopped it). */
bool http_send(const struct http_request *request, int *status, char *why, size_t why_size);

/* Closes a kept connection (NULL: nothing to close); sets it to NULL. */
void http_connection_close(struct http_connection **connection);

/* `text` with every byte but RFC 3986's unreserved characters
 * percent-encoded, for a query value (malloc'd); NULL when libwget cannot be
 * loaded. */
char *http_escape(const char *text);

/* `url` with the user info between "//" and "@" (a user and password)
 * left out (malloc'd; NULL when out of memory): what may be printed of a
 * URL. */
char *http_redact_url(const char *url);

/* Frees what the TLS part kept (the CA certificates); for the end of a run. */
void http_client_cleanup(void);

#endif
