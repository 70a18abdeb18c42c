#include "push_target.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A password or token longer than this is no secret but a wrong file. */
#define MAX_SECRET_BYTES 8192

/* Where the user info of `url` is: after "//", up to the last '@' before
 * the path. False when it has none. */
static bool find_user_info(const char *url, const char **start, const char **end)
{
	const char *authority = strstr(url, "://");
	const char *path_start, *at = NULL;

	if (!authority)
		return false;
	authority += 3;
	path_start = authority + strcspn(authority, "/?#");
	for (const char *c = authority; c < path_start; c++)
		if (*c == '@')
			at = c;
	if (!at)
		return false;
	*start = authority;
	*end = at;
	return true;
}

char *push_target_redact(const char *url)
{
	char *redacted = http_redact_url(url);

	if (!redacted)
		die("out of memory");
	return redacted;
}

static int hex_value(char c)
{
	if (isdigit((unsigned char)c))
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* `length` bytes of `text` with %XX decoded (malloc'd). */
static char *percent_decode(const char *text, size_t length)
{
	char *out = xmalloc(length + 1);
	size_t used = 0;

	for (size_t i = 0; i < length; i++) {
		if (text[i] == '%' && i + 2 < length && hex_value(text[i + 1]) >= 0 &&
		    hex_value(text[i + 2]) >= 0) {
			out[used++] = (char)(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
			i += 2;
		} else {
			out[used++] = text[i];
		}
	}
	out[used] = '\0';
	return out;
}

static char *base64(const char *text)
{
	static const char digits[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t length = strlen(text), used = 0;
	char *out = xmalloc((length + 2) / 3 * 4 + 1);

	for (size_t i = 0; i < length; i += 3) {
		unsigned bits = (unsigned char)text[i] << 16;

		if (i + 1 < length)
			bits |= (unsigned char)text[i + 1] << 8;
		if (i + 2 < length)
			bits |= (unsigned char)text[i + 2];
		out[used++] = digits[bits >> 18 & 63];
		out[used++] = digits[bits >> 12 & 63];
		out[used++] = i + 1 < length ? digits[bits >> 6 & 63] : '=';
		out[used++] = i + 2 < length ? digits[bits & 63] : '=';
	}
	out[used] = '\0';
	return out;
}

/* The prefix of the options' names (push_target_options.option_prefix). */
static const char *prefix_of(const struct push_target_options *credentials)
{
	return credentials->option_prefix ? credentials->option_prefix : "";
}

/* The first line of the file at `path` (a Secret's file may end without a
 * newline, a hand-written one with one), or NULL after saying why; `option`
 * is named --PREFIXOPTION. */
static char *read_secret(const char *path, const char *prefix, const char *option)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat status;
	char *secret = NULL;
	ssize_t got = -1;

	if (fd >= 0 && fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
	    status.st_size <= MAX_SECRET_BYTES) {
		secret = xmalloc((size_t)status.st_size + 1);
		got = read(fd, secret, (size_t)status.st_size);
	} else if (fd >= 0) {
		errno = EINVAL;
	}
	if (got >= 0) {
		secret[got] = '\0';
		secret[strcspn(secret, "\r\n")] = '\0';
	}
	if (got < 0 || !secret[0]) {
		report_error(
		    "cannot read --%s%s %s: %s", prefix, option, path,
		    got < 0 ? (errno == EINVAL ? "not a file of at most 8 KiB" : strerror(errno))
			    : "it is empty");
		free(secret);
		secret = NULL;
	}
	if (fd >= 0)
		close(fd);
	return secret;
}

static void add_header(struct push_target *target, const char *name, char *value)
{
	target->headers =
	    xrealloc(target->headers, (target->header_count + 1) * sizeof(*target->headers));
	target->headers[target->header_count++] =
	    (struct http_header){.name = xstrdup(name), .value = value};
}

/* Whether `text` may go in a header: no line break or other control. */
static bool header_safe(const char *text)
{
	for (; *text; text++)
		if (iscntrl((unsigned char)*text) && *text != '\t')
			return false;
	return true;
}

/* The password: from the URL, the file or the variable. NULL after saying
 * why. `*source` says where it came from. */
static char *find_password(const struct push_target_options *credentials, const char *url_password,
			   char **source)
{
	if (credentials->password_file) {
		*source = xasprintf("its password from %s", credentials->password_file);
		return read_secret(credentials->password_file, prefix_of(credentials),
				   "basic-auth-password-file");
	}
	if (credentials->password_env) {
		const char *value = getenv(credentials->password_env);

		*source = xasprintf("its password from $%s", credentials->password_env);
		if (!value || !*value) {
			report_error(
			    "--%sbasic-auth-password-env %s: that variable is not set in the "
			    "agent's environment",
			    prefix_of(credentials), credentials->password_env);
			return NULL;
		}
		return xstrdup(value);
	}
	*source = xstrdup("its password from the URL");
	return xstrdup(url_password ? url_password : "");
}

/* Authorization: Basic, from the user of the URL or --basic-auth-user. */
static int add_basic_auth(struct push_target *target, const struct push_target_options *credentials,
			  char *url_user, char *url_password)
{
	const char *user = credentials->user ? credentials->user : url_user;
	char *source = NULL, *password = NULL, *pair, *encoded;

	if (!user) {
		report_error("a password needs a user: give --%sbasic-auth-user USER (for Grafana "
			     "Cloud, the stack's user id)",
			     prefix_of(credentials));
		return -1;
	}
	password = find_password(credentials, url_password, &source);
	if (!password) {
		free(source);
		return -1;
	}
	if (strchr(user, ':') || !header_safe(user)) {
		report_error("the basic auth user may hold no ':' nor control characters");
		free(password);
		free(source);
		return -1;
	}
	pair = xasprintf("%s:%s", user, password);
	encoded = base64(pair);
	add_header(target, "Authorization", xasprintf("Basic %s", encoded));
	target->credential = xasprintf("the basic auth of user %s (%s)", user, source);
	free(encoded);
	free(pair);
	free(password);
	free(source);
	return 0;
}

/* Authorization: Bearer, from --bearer-token-file. */
static int add_bearer_token(struct push_target *target, const char *path, const char *prefix)
{
	char *token = read_secret(path, prefix, "bearer-token-file");

	if (!token)
		return -1;
	if (!header_safe(token)) {
		report_error("--%sbearer-token-file %s holds control characters: not a token",
			     prefix, path);
		free(token);
		return -1;
	}
	add_header(target, "Authorization", xasprintf("Bearer %s", token));
	target->credential = xasprintf("the bearer token of %s", path);
	free(token);
	return 0;
}

/* --header 'NAME: VALUE' */
static int add_user_header(struct push_target *target, const char *text, const char *prefix)
{
	const char *colon = strchr(text, ':');
	const char *value = colon ? colon + 1 : NULL;
	char *name;

	while (value && (*value == ' ' || *value == '\t'))
		value++;
	if (!colon || colon == text || !header_safe(text) ||
	    strcspn(text, " \t") < (size_t)(colon - text)) {
		report_error(
		    "--%sheader needs NAME: VALUE on one line (e.g. --%sheader 'X-Team: a')",
		    prefix, prefix);
		return -1;
	}
	name = xasprintf("%.*s", (int)(colon - text), text);
	add_header(target, name, xstrdup(value));
	free(name);
	return 0;
}

int push_target_make(const char *url, const struct push_target_options *credentials,
		     struct push_target *target)
{
	const char *start, *end;
	char *url_user = NULL, *url_password = NULL;
	bool basic = credentials->user || credentials->password_file || credentials->password_env;
	int status = 0;

	*target = (struct push_target){.url = push_target_redact(url),
				       .option_prefix = prefix_of(credentials)};
	if (credentials->api && strcmp(credentials->api, "push")) {
		if (strcmp(credentials->api, "ingest")) {
			report_error("unknown --api %s: give push or ingest", credentials->api);
			push_target_release(target);
			return -1;
		}
		target->api = PUSH_API_INGEST;
	}
	if (find_user_info(url, &start, &end)) {
		const char *colon = memchr(start, ':', (size_t)(end - start));

		url_user = percent_decode(start, (size_t)((colon ? colon : end) - start));
		url_password = colon ? percent_decode(colon + 1, (size_t)(end - colon - 1)) : NULL;
		basic = true;
	}
	if (basic && credentials->token_file) {
		report_error("give basic auth or --%sbearer-token-file, not both",
			     target->option_prefix);
		status = -1;
	} else if (basic) {
		status = add_basic_auth(target, credentials, url_user, url_password);
	} else if (credentials->token_file) {
		status = add_bearer_token(target, credentials->token_file, target->option_prefix);
	}
	if (status == 0 && credentials->tenant) {
		if (!credentials->tenant[0] || !header_safe(credentials->tenant)) {
			report_error("--tenant needs an id without control characters");
			status = -1;
		} else {
			add_header(target, "X-Scope-OrgID", xstrdup(credentials->tenant));
		}
	}
	for (size_t i = 0; status == 0 && i < credentials->headers.count; i++)
		status =
		    add_user_header(target, credentials->headers.items[i], target->option_prefix);
	if (url_password)
		memset(url_password, 0, strlen(url_password));
	free(url_user);
	free(url_password);
	if (status < 0)
		push_target_release(target);
	return status;
}

void push_target_release(struct push_target *target)
{
	for (size_t i = 0; i < target->header_count; i++) {
		char *value = (char *)target->headers[i].value;

		/* The secrets do not outlive the target in freed memory. */
		memset(value, 0, strlen(value));
		free((char *)target->headers[i].name);
		free(value);
	}
	free(target->headers);
	free(target->url);
	free(target->credential);
	*target = (struct push_target){0};
}

char *push_target_url(const struct push_target *target, const char *path)
{
	size_t base = strlen(target->url);

	while (base && target->url[base - 1] == '/')
		base--;
	return xasprintf("%.*s%s", (int)base, target->url, path);
}

/* The first line of the server's answer, kept for the error message. */
struct answer {
	char text[200];
	size_t length;
};

static bool keep_answer(void *context, const char *data, size_t size, char *why, size_t why_size)
{
	struct answer *answer = context;
	size_t room = sizeof(answer->text) - 1 - answer->length;
	size_t take = size < room ? size : room;

	(void)why;
	(void)why_size;
	memcpy(answer->text + answer->length, data, take);
	answer->length += take;
	answer->text[answer->length] = '\0';
	answer->text[strcspn(answer->text, "\r\n")] = '\0';
	return true;
}

/* What a 401 or 403 says: which credential the server refused. */
static void describe_refusal(const struct push_target *target, int status, const char *answer,
			     char *why, size_t why_size)
{
	if (target->credential)
		snprintf(why, why_size, "the server refused %s: HTTP %d%s%s", target->credential,
			 status, answer[0] ? ": " : "", answer);
	else
		snprintf(why, why_size,
			 "the server wants credentials (HTTP %d%s%s): give --%sbasic-auth-user "
			 "with --%sbasic-auth-password-file, or --%sbearer-token-file",
			 status, answer[0] ? ": " : "", answer, target->option_prefix,
			 target->option_prefix, target->option_prefix);
}

enum push_result push_target_post(const struct push_target *target, const struct push_post *post,
				  char *why, size_t why_size)
{
	struct http_header *headers =
	    xcalloc(target->header_count + post->extra_header_count + 1, sizeof(*headers));
	size_t header_count = target->header_count;
	struct answer answer = {{0}, 0};
	bool answered;
	int status;

	if (target->header_count)
		memcpy(headers, target->headers, target->header_count * sizeof(*headers));
	for (size_t i = 0; i < post->extra_header_count; i++)
		headers[header_count++] = post->extra_headers[i];
	answered = http_send(&(struct http_request){.method = "POST",
						    .url = post->url,
						    .content_type = post->content_type,
						    .body = post->body,
						    .body_size = post->size,
						    .headers = headers,
						    .header_count = header_count,
						    .timeout_ms = (int)(post->timeout * 1000),
						    .sink = keep_answer,
						    .sink_context = &answer,
						    .keep = post->keep},
			     &status, why, why_size);
	free(headers);
	if (!answered)
		return PUSH_LATER;
	if (status >= 200 && status < 300)
		return PUSH_SENT;
	if (status == 401 || status == 403) {
		describe_refusal(target, status, answer.text, why, why_size);
		return PUSH_UNAUTHORIZED;
	}
	snprintf(why, why_size, "the server answered HTTP %d%s%s", status,
		 answer.text[0] ? ": " : "", answer.text);
	return status >= 500 || status == 429 ? PUSH_LATER : PUSH_REFUSED;
}
