/* Where profiles are pushed and as whom: the receiver's URL without the
 * user info it may carry, and the headers each push sends (basic auth
 * from the URL or from a password file or variable, a bearer token from
 * a file, the tenant, the user's own). Secrets stay in the headers, which
 * nothing prints; the URL and the credential's description are safe to
 * print. */
#ifndef PROFCPU_PUSH_TARGET_H
#define PROFCPU_PUSH_TARGET_H

#include "http_client.h"
#include "util.h"

#include <stddef.h>

/* Which of Pyroscope's APIs takes the profiles. */
enum push_api {
	PUSH_API_PUSH,	 /* POST /push.v1.PusherService/Push (Connect, protobuf) */
	PUSH_API_INGEST, /* POST /ingest?name=... (multipart), the legacy API */
};

/* What the user gave: each NULL when not given. */
struct push_target_options {
	/* What the options' names start with after "--", in what is said of
	 * them: NULL for Pyroscope's (--header), "otlp-" for the OpenTelemetry
	 * receiver's own (--otlp-header). */
	const char *option_prefix;
	const char *api;	    /* --api push or ingest */
	const char *user;	    /* --basic-auth-user */
	const char *password_file;  /* --basic-auth-password-file: a Kubernetes Secret's file */
	const char *password_env;   /* --basic-auth-password-env: a variable's name */
	const char *token_file;	    /* --bearer-token-file */
	const char *tenant;	    /* --tenant: X-Scope-OrgID */
	struct string_list headers; /* --header 'NAME: VALUE', repeatable */
};

struct push_target {
	enum push_api api;
	char *url;		     /* the receiver, without user info (malloc'd) */
	char *credential;	     /* the credential sent, in words (malloc'd), or NULL */
	const char *option_prefix;   /* push_target_options' */
	struct http_header *headers; /* names and values malloc'd */
	size_t header_count;
};

/* What became of a push. */
enum push_result {
	PUSH_UNREADABLE = -2, /* what was to be sent is not what it should be (not pprof):
				 nothing was sent */
	PUSH_REFUSED = -1,    /* the server refused it (4xx): no other try */
	PUSH_SENT = 0,
	PUSH_LATER = 1,	       /* unreachable, too slow, 5xx, 429: worth another try */
	PUSH_UNAUTHORIZED = 2, /* 401, 403: the credentials were refused */
};

/* One POST to the target. */
struct push_post {
	const char *url; /* push_target_url's */
	const char *content_type;
	const void *body;
	size_t size;
	const struct http_header *extra_headers; /* sent besides the target's */
	size_t extra_header_count;
	double timeout;		       /* seconds the server may stay silent */
	struct http_connection **keep; /* as http_request's */
};

/* Sends `post` with the target's headers. Unless PUSH_SENT, `why` says
 * what went wrong (the first line of the server's answer with its HTTP
 * status; for PUSH_UNAUTHORIZED, which credential it refused). */
enum push_result push_target_post(const struct push_target *target, const struct push_post *post,
				  char *why, size_t why_size);

/* The target's URL followed by `path` (malloc'd), without a doubled '/'. */
char *push_target_url(const struct push_target *target, const char *path);

/* Makes the target of `url` with `credentials` (the options): the API
 * chosen, the password and token
 * files and the variable are read now. Returns 0, or -1 after one line
 * that names what is wrong (never its secret) and how to fix it. */
int push_target_make(const char *url, const struct push_target_options *credentials,
		     struct push_target *target);

/* `url` with the user info between "//" and "@" left out (malloc'd): what
 * may be printed of a URL. */
char *push_target_redact(const char *url);

void push_target_release(struct push_target *target);

#endif
