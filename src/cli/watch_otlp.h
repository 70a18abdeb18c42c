/* A watch capture as OpenTelemetry profiles (--otlp URL): its perf.data's
 * processes in one OTLP/HTTP request, encoded as the agent encodes a
 * period's (otlp_profiles.h). */
#ifndef PROFCPU_WATCH_OTLP_H
#define PROFCPU_WATCH_OTLP_H

#include "push_target.h"
#include "resolver.h"

/* Sends the samples of `dir`/perf.data (named as `config` names them) to
 * `target`, each process a resource named `service` (NULL: its name),
 * in one try of at most `timeout` seconds of silence. Returns 0, or -1
 * after one line saying why. */
int watch_otlp_send(const struct push_target *target, double timeout, const char *dir,
		    const struct resolver_config *config, const char *service);

#endif
