#include "pyroscope_push.h"
#include "http_client.h"
#include "profile.pb-c.h"
#include "push_request_encode.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_PROFILE_BYTES ((size_t)256 << 20)
#define TRIES		  3

/* What the ingest query needs from the profile. */
struct profile_facts {
	int64_t from, until; /* Unix seconds */
	long sample_rate;    /* Hz */
	char *process_name;  /* the first sample's "process" label, or NULL */
};

/* The profile, gunzipped, or NULL when it is not gzip. */
static unsigned char *gunzip(const unsigned char *data, size_t size, size_t *length)
{
	z_stream stream = {.next_in = (Bytef *)data, .avail_in = (uInt)size};
	size_t capacity = size * 4 + 4096;
	unsigned char *out = xmalloc(capacity);
	int result = Z_OK;

	if (inflateInit2(&stream, 16 + 15) != Z_OK) {
		free(out);
		return NULL;
	}
	while (result == Z_OK) {
		if (stream.total_out == capacity) {
			if (capacity >= MAX_PROFILE_BYTES * 4)
				break;
			capacity *= 2;
			out = xrealloc(out, capacity);
		}
		stream.next_out = out + stream.total_out;
		stream.avail_out = (uInt)(capacity - stream.total_out);
		result = inflate(&stream, Z_NO_FLUSH);
	}
	*length = stream.total_out;
	inflateEnd(&stream);
	if (result != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

/* from, until and the rate, from what the profile covers. */
static void take_span(const struct pprof_span *span, struct profile_facts *facts)
{
	facts->from = span->time_nanos / 1000000000;
	facts->until = (span->time_nanos + span->duration_nanos + 999999999) / 1000000000;
	facts->sample_rate = span->period > 0 ? (long)(1e9 / (double)span->period + 0.5) : 100;
}

/* Reads the facts from the pprof encoding itself, decoded by protobuf-c. */
static bool read_facts(const unsigned char *gzipped, size_t size, struct profile_facts *facts)
{
	size_t length;
	unsigned char *encoded = gunzip(gzipped, size, &length);
	Perftools__Profiles__Profile *profile =
	    encoded ? perftools__profiles__profile__unpack(NULL, length, encoded) : NULL;

	free(encoded);
	if (!profile)
		return false;
	take_span(
	    &(struct pprof_span){profile->time_nanos, profile->duration_nanos, profile->period},
	    facts);
	facts->process_name = NULL;
	if (profile->n_sample)
		for (size_t i = 0; i < profile->sample[0]->n_label; i++) {
			const Perftools__Profiles__Label *label = profile->sample[0]->label[i];

			if ((size_t)label->key < profile->n_string_table &&
			    (size_t)label->str < profile->n_string_table &&
			    !strcmp(profile->string_table[label->key], "process"))
				facts->process_name = xstrdup(profile->string_table[label->str]);
		}
	perftools__profiles__profile__free_unpacked(profile, NULL);
	return true;
}

/* What a part of the series name may hold: Pyroscope's application names
 * take letters, digits and "._-/", label keys the same but '/'; anything
 * else becomes '_'. Values lose only the characters that delimit the
 * name's label set. */
enum name_part { APP_NAME, LABEL_KEY, LABEL_VALUE };

static bool allowed_in(enum name_part part, char c)
{
	switch (part) {
	case APP_NAME:
		return isalnum((unsigned char)c) || strchr("._-/", c);
	case LABEL_KEY:
		return isalnum((unsigned char)c) || strchr("._-", c);
	case LABEL_VALUE:
		return !strchr("{},=\"", c) && !iscntrl((unsigned char)c);
	}
	return false;
}

static void append_clean(char **name, size_t *length, size_t *capacity, const char *text,
			 enum name_part part)
{
	for (; *text; text++) {
		char c = allowed_in(part, *text) ? *text : '_';

		grow_array((void **)name, capacity, *length + 2, 1);
		(*name)[(*length)++] = c;
		(*name)[*length] = '\0';
	}
}

static void append_text(char **name, size_t *length, size_t *capacity, const char *text)
{
	size_t size = strlen(text);

	grow_array((void **)name, capacity, *length + size + 1, 1);
	memcpy(*name + *length, text, size + 1);
	*length += size;
}

/* "APP.cpu{key=value,...}" */
static char *series_name(const struct push_request *request, const struct profile_facts *facts)
{
	char *name = NULL;
	size_t length = 0, capacity = 0;

	append_clean(&name, &length, &capacity,
		     request->app_name	   ? request->app_name
		     : facts->process_name ? facts->process_name
					   : "profcpu",
		     APP_NAME);
	append_text(&name, &length, &capacity, ".");
	append_text(&name, &length, &capacity,
		    request->profile_name ? request->profile_name : "cpu");
	append_text(&name, &length, &capacity, "{");
	for (size_t i = 0; i < request->label_count; i++) {
		const char *equals = strchr(request->labels[i], '=');
		char *key = xstrdup(request->labels[i]);

		key[equals ? (size_t)(equals - request->labels[i]) : strlen(key)] = '\0';
		if (i)
			append_text(&name, &length, &capacity, ",");
		append_clean(&name, &length, &capacity, key, LABEL_KEY);
		append_text(&name, &length, &capacity, "=");
		append_clean(&name, &length, &capacity, equals ? equals + 1 : "", LABEL_VALUE);
		free(key);
	}
	append_text(&name, &length, &capacity, "}");
	return name;
}

/* The multipart/form-data body: `data` as the field "profile". */
#define FORM_BOUNDARY "profcpu-8d2f4c1a9e7b3605"
static char *form_body(const unsigned char *data, size_t size, size_t *length)
{
	static const char head[] =
	    "--" FORM_BOUNDARY "\r\n"
	    "Content-Disposition: form-data; name=\"profile\"; filename=\"profile.pb.gz\"\r\n"
	    "Content-Type: application/octet-stream\r\n\r\n";
	static const char tail[] = "\r\n--" FORM_BOUNDARY "--\r\n";
	char *body = xmalloc(sizeof(head) - 1 + size + sizeof(tail) - 1);

	memcpy(body, head, sizeof(head) - 1);
	memcpy(body + sizeof(head) - 1, data, size);
	memcpy(body + sizeof(head) - 1 + size, tail, sizeof(tail) - 1);
	*length = sizeof(head) - 1 + size + sizeof(tail) - 1;
	return body;
}

/* A request's URL and body, for one API. */
struct post {
	char *url, *body;
	size_t size;
	const char *content_type;
	/* Connect's unary requests name the protocol's version. */
	bool connect;
};

/* URL/ingest?name=...: the name percent-encoded; the profile as the
 * multipart field "profile". */
static void ingest_post(const struct push_request *request, const struct profile_facts *facts,
			const unsigned char *data, size_t size, struct post *post)
{
	char *name = series_name(request, facts);
	char *escaped = http_escape(name);
	char *query =
	    xasprintf("/ingest?name=%s&from=%" PRId64 "&until=%" PRId64
		      "&sampleRate=%ld&format=pprof&spyName=profcpu",
		      escaped ? escaped : name, facts->from, facts->until, facts->sample_rate);

	*post = (struct post){.url = push_target_url(request->target, query),
			      .content_type = "multipart/form-data; boundary=" FORM_BOUNDARY};
	post->body = form_body(data, size, &post->size);
	free(query);
	free(escaped);
	free(name);
}

/* URL/push.v1.PusherService/Push: a PushRequest of one series
 * (push_request_encode.h). */
static void push_api_post(const struct push_request *request, const struct profile_facts *facts,
			  const unsigned char *data, size_t size, struct post *post)
{
	const char *service = request->app_name	    ? request->app_name
			      : facts->process_name ? facts->process_name
						    : "profcpu";

	*post =
	    (struct post){.url = push_target_url(request->target, "/push.v1.PusherService/Push"),
			  .content_type = "application/proto",
			  .connect = true};
	post->body = (char *)push_request_encode(
	    request->profile_name ? request->profile_name : "process_cpu", service, request->labels,
	    request->label_count, data, size, &post->size);
}

/* Posts the profile, trying again after 1 s and 2 s when the server was
 * unreachable, slow, or answered 429 or 5xx. */
static enum push_result post_with_retries(const struct push_request *request,
					  const struct profile_facts *facts,
					  const unsigned char *data, size_t size, char *why,
					  size_t why_size)
{
	double timeout = request->timeout > 0 ? request->timeout : 30;
	int tries = request->tries > 0 ? request->tries : TRIES;
	static const struct http_header connect_version = {"Connect-Protocol-Version", "1"};
	enum push_result result = PUSH_REFUSED;
	struct post post;

	if (request->target->api == PUSH_API_INGEST)
		ingest_post(request, facts, data, size, &post);
	else
		push_api_post(request, facts, data, size, &post);
	for (int try = 1; try <= tries; try++) {
		result =
		    push_target_post(request->target,
				     &(struct push_post){.url = post.url,
							 .content_type = post.content_type,
							 .body = post.body,
							 .size = post.size,
							 .extra_headers = &connect_version,
							 .extra_header_count = post.connect ? 1 : 0,
							 .timeout = timeout,
							 .keep = request->keep},
				     why, why_size);
		if (result != PUSH_LATER)
			break;
		if (try < tries)
			sleep((unsigned)try);
	}
	free(post.body);
	free(post.url);
	return result;
}

enum push_result pyroscope_push_profile(const unsigned char *data, size_t size,
					const struct push_request *request, char *why,
					size_t why_size)
{
	struct profile_facts facts = {0};
	enum push_result status;

	/* Decoding the profile costs more than encoding it: the caller's span
	 * when it has one. */
	if (request->span)
		take_span(request->span, &facts);
	else if (!read_facts(data, size, &facts)) {
		snprintf(why, why_size, "it is not a gzip-compressed pprof profile");
		return PUSH_UNREADABLE;
	}
	status = post_with_retries(request, &facts, data, size, why, why_size);
	free(facts.process_name);
	return status;
}

int pyroscope_push(const char *dir, const struct push_request *request)
{
	char *path = xasprintf("%s/profile.pb.gz", dir), why[512] = "";
	size_t size = 0;
	unsigned char *data = read_whole_file(path, 0, MAX_PROFILE_BYTES, &size);
	int status = -1;

	if (!data)
		snprintf(why, sizeof(why), "cannot read it: %s", strerror(errno));
	else
		status = pyroscope_push_profile(data, size, request, why, sizeof(why)) == PUSH_SENT
			     ? 0
			     : -1;
	http_client_cleanup();
	if (status == 0)
		printf("profcpu: pushed %s to %s\n", path, request->target->url);
	else
		report_error("cannot push %s to %s: %s (the outputs stay in %s; retry with profcpu "
			     "push %s %s)",
			     path, request->target->url, why, dir, dir, request->target->url);
	free(data);
	free(path);
	return status;
}
