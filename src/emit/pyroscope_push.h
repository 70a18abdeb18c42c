/* Sends a capture's profile.pb.gz to a Pyroscope server (or anything that
 * speaks its APIs: Grafana Alloy's pyroscope.receive_http, Grafana Cloud
 * Profiles), through the API its target names (push_target.h):
 * - push (the default): POST URL/push.v1.PusherService/Push, a PushRequest
 *   of one series (push_request_encode.h) labelled __name__=NAME (the
 *   profile's name: process_cpu, or another as memory), service_name=APP
 *   and the labels;
 * - ingest: POST URL/ingest?name=APP.KIND{LABELS}&from=&until=&sampleRate=
 *   (KIND: cpu for process_cpu, else the profile's name)
 *   &format=pprof, the profile as the multipart field "profile". The
 *   application name keeps letters, digits and "._-/"; label keys the
 *   same but '/'; label values lose only the characters that delimit the
 *   label set ("{},=\"") and control characters: each becomes '_'. */
#ifndef PROFCPU_PYROSCOPE_PUSH_H
#define PROFCPU_PYROSCOPE_PUSH_H

#include "emit.h"
#include "push_target.h"

#include <stddef.h>

struct http_connection; /* http_client.h */

struct push_request {
	const struct push_target *target; /* the server and the credentials */
	const char *app_name;		  /* NULL: the profile's process name */
	const char *profile_name;	  /* Pyroscope's __name__; NULL: process_cpu */
	const char *const *labels;	  /* "key=value", label_count of them */
	size_t label_count;
	double timeout; /* seconds the server may stay silent in one try; 0: 30 */
	int tries;	/* 0: 3 */
	/* What the profile covers, when the caller knows (emit_pprof_part);
	 * NULL: read from the profile itself. */
	const struct pprof_span *span;
	/* NULL: a connection for this push alone; else the connection kept
	 * from push to push (http_client.h), closed by the caller. */
	struct http_connection **keep;
};

/* Pushes DIR/profile.pb.gz; from, until and the sample rate come from the
 * profile itself. Tries three times when the server cannot be reached, is
 * too slow or answers 5xx or 429. Returns 0, or -1 after one line that says
 * what the server said or why it could not be reached. */
int pyroscope_push(const char *dir, const struct push_request *request);

/* Pushes a gzip-compressed pprof profile held in memory, as pyroscope_push
 * does but printing nothing, and keeping what TLS loaded for the next push
 * (http_client_cleanup() at the end). Unless PUSH_SENT, `why` says what
 * went wrong: for PUSH_UNAUTHORIZED, which credential was refused; for
 * PUSH_UNREADABLE, that `data` is no gzip-compressed pprof profile. */
enum push_result pyroscope_push_profile(const unsigned char *data, size_t size,
					const struct push_request *request, char *why,
					size_t why_size);

#endif
