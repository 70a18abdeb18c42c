/* The body of Pyroscope's push API (POST /push.v1.PusherService/Push,
 * Connect over HTTP/1.1, Content-Type application/proto): a
 * push.v1.PushRequest of one RawProfileSeries, written in protobuf's wire
 * format:
 *
 *   PushRequest      { repeated RawProfileSeries series = 1; }
 *   RawProfileSeries { repeated types.v1.LabelPair labels = 1;
 *                      repeated RawSample samples = 2; }
 *   LabelPair        { string name = 1; string value = 2; }
 *   RawSample        { bytes raw_profile = 1; string ID = 2; }
 *
 * The series' labels are __name__ (the profile's name), service_name, then the
 * caller's; a label name keeps letters, digits and '_' (the server turns
 * the rest, dots too, into '_'; names starting "__" are its own). */
#ifndef PROFCPU_PUSH_REQUEST_ENCODE_H
#define PROFCPU_PUSH_REQUEST_ENCODE_H

#include <stddef.h>

/* The PushRequest (malloc'd, `*size` bytes) of the gzipped pprof `profile`
 * named `name` (process_cpu, memory, ...) for `service` with `labels`
 * ("key=value", `label_count` of them), its sample's ID a random UUID. */
unsigned char *push_request_encode(const char *name, const char *service, const char *const *labels,
				   size_t label_count, const unsigned char *profile,
				   size_t profile_size, size_t *size);

#endif
