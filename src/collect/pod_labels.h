/* Where a process runs, as Pyroscope's own agents label a profile:
 * its Kubernetes namespace and pod, its container, and a service name.
 *
 * The container id is the kernel's: from the process's cgroup path. The
 * pod's namespace, name and uid and the container's name come, in order:
 *
 * 1. from the container runtime's own state (container_state.h), which
 *    the container cannot write;
 * 2. else, as a last resort, from files inside the container, which it
 *    can write: in Kubernetes a pod's name is its containers' hostname
 *    (/etc/hostname) and its namespace is in the service account file
 *    /var/run/secrets/kubernetes.io/serviceaccount/namespace. Each is read
 *    inside the process's root as hostile input: non-blocking, only from
 *    a regular file, at most a few hundred bytes.
 *
 * Each label keeps its source; a value that is not a valid Kubernetes name
 * (RFC 1123) cannot add or change a label. */
#ifndef PROFCPU_POD_LABELS_H
#define PROFCPU_POD_LABELS_H

#include "kubernetes_name.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define POD_UID_MAX 36 /* a UUID */

/* Where a label was read. */
enum pod_label_source {
	POD_LABEL_NONE,		   /* not found: the label is "" */
	POD_LABEL_RUNTIME,	   /* the container runtime's state */
	POD_LABEL_CONTAINER_FILES, /* files inside the container: it may have written them */
};

struct pod_labels {
	char namespace[NAMESPACE_MAX + 1];	/* "" outside Kubernetes */
	char pod[POD_NAME_MAX + 1];		/* "" outside Kubernetes */
	char pod_uid[POD_UID_MAX + 1];		/* "" unless from the runtime */
	char container_name[NAMESPACE_MAX + 1]; /* "" unless from the runtime */
	char container[13];			/* the container id, 12 hex digits; "" if none */
	enum pod_label_source namespace_source, pod_source;
	/* The file whose content was refused ("/etc/hostname"), or NULL. */
	const char *refused_file;
	char refused_why[64];
};

/* Reads the labels of `pid`, the runtime's state looked for also in
 * `state_folders` (container_state_read; NULL: the usual folders alone).
 * Never fails: what cannot be read or is not valid stays "" (refused_file
 * says which file was refused and why). */
void pod_labels_read(pid_t pid, const struct string_list *state_folders, struct pod_labels *labels);

/* Whether the namespace or the pod came from files the container can
 * write. */
bool pod_labels_from_container_files(const struct pod_labels *labels);

/* The container id in /proc/PID/cgroup (docker-ID.scope, libpod-ID.scope,
 * .../kubepods/.../ID: 64 hex digits), shortened to 12 as `docker ps` and
 * `podman ps` show it; false outside a container. */
bool pod_labels_container_id(pid_t pid, char id[13]);

/* The same from the `length` bytes of a cgroup file (any bytes): the
 * container id in `id` ("" when none), and whether a cgroup path names
 * Kubernetes' pods (kubepods). */
void pod_labels_parse_cgroup(const char *text, size_t length, char id[13], bool *kubernetes);

/* The service a pod belongs to: its name without the suffixes Kubernetes
 * generates for a Deployment's or a DaemonSet's pods ("checkout" from
 * "checkout-7d9f8b4c6-x2k4q"), written into `service` (size bytes). */
void pod_labels_workload(const char *pod, char *service, size_t size);

#endif
