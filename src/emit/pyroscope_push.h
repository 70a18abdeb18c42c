/* Sends a capture's profile.pb.gz to a Pyroscope server (or anything that
 * speaks its ingest API: Grafana Alloy's pyroscope.receive_http, Grafana
 * Cloud Profiles): POST URL/ingest?name=APP.cpu{LABELS}&from=&until=
 * &sampleRate=&format=pprof, the profile as the multipart field "profile". */
#ifndef PROFCPU_PYROSCOPE_PUSH_H
#define PROFCPU_PYROSCOPE_PUSH_H

#include <stddef.h>

struct push_request {
	const char *url;	   /* the server, e.g. http://pyroscope:4040 */
	const char *app_name;	   /* NULL: the profile's process name */
	const char *const *labels; /* "key=value", label_count of them */
	size_t label_count;
	double timeout; /* seconds the server may stay silent in one try; 0: 30 */
};

/* Pushes DIR/profile.pb.gz; from, until and the sample rate come from the
 * profile itself. Tries three times when the server cannot be reached, is
 * too slow or answers 5xx or 429. Returns 0, or -1 after one line that says
 * what the server said or why it could not be reached. */
int pyroscope_push(const char *dir, const struct push_request *request);

#endif
