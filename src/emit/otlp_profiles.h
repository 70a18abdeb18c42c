/* A period's processes as OpenTelemetry profiles (OTLP/HTTP, the alpha
 * signal of opentelemetry-proto's profiles/v1development): one
 * ExportProfilesServiceRequest, written in protobuf's wire format, with a
 * ResourceProfiles per process whose attributes are those the
 * OpenTelemetry eBPF profiler and the Collector's k8sattributes processor
 * set (service.name, k8s.namespace.name, k8s.pod.name, container.id,
 * process.pid, process.executable.name), one Profile each (sample type
 * samples/count, period type cpu/nanoseconds; each sample's thread.name)
 * and one more for each sample type of its runtime events' profiles, and
 * one dictionary of strings, functions, mappings, locations (each with
 * its profile.frame.type: native, dotnet, kernel), stacks and attributes,
 * whose entry 0 is the zero value of each table. */
#ifndef PROFCPU_OTLP_PROFILES_H
#define PROFCPU_OTLP_PROFILES_H

#include "process_profiles.h"
#include "push_target.h"
#include "runtime_profiles.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The index of a process with no CPU samples in the period: its runtime
 * events' Profiles alone. */
#define OTLP_NO_SAMPLES SIZE_MAX

/* One process's resource; "" where a label is not known. */
struct otlp_process {
	size_t index; /* into the period's processes; OTLP_NO_SAMPLES: none */
	pid_t pid;
	const char *executable; /* its name (comm) */
	const char *service, *namespace, *pod, *container;
	/* The profiles of its runtime events by kind (runtime_profiles.h), or
	 * NULL: each kind with events gives a Profile of each of its pprof
	 * values (contentions/count and delay/nanoseconds, exceptions/count,
	 * alloc_objects/count and alloc_space/bytes) beside the CPU one. */
	const struct runtime_profile *runtime;
};

/* The request (malloc'd, `*size` bytes) for `count` processes. */
unsigned char *otlp_profiles_encode(const struct process_profiles *profiles,
				    const struct otlp_process *processes, size_t count,
				    size_t *size);

/* POSTs the request to URL/v1development/profiles (URL as given when it
 * ends so) as application/x-protobuf, gzip-compressed (Content-Encoding:
 * gzip, which OTLP/HTTP receivers take), with the header
 * OTLP-Profiles-Development-Version: 1. Returns as push_target_post. */
enum push_result otlp_profiles_send(const struct push_target *target, const unsigned char *body,
				    size_t size, double timeout, struct http_connection **keep,
				    char *why, size_t why_size);

#endif
