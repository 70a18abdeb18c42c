/* Containers by name: `--container istio-proxy` as well as by id. A
 * container's name is not in its cgroup, only in its runtime's state on the
 * host, read here as each runtime writes it:
 *   - containers/storage (podman, CRI-O): GRAPHROOT/DRIVER-containers/
 *     containers.json, each container's "id" and "names" (CRI-O names a
 *     Kubernetes container k8s_NAME_POD_NAMESPACE_UID_ATTEMPT); the
 *     graphroot from $CONTAINERS_STORAGE_CONF or /etc/containers/storage.conf,
 *     else /var/lib/containers/storage;
 *   - containerd's CRI (Kubernetes): /run/containerd/io.containerd.runtime.v2.task/
 *     NAMESPACE/ID/config.json, the annotation io.kubernetes.cri.container-name,
 *     read as container_state.h reads the pod labels (a valid name, its pod's
 *     namespace and name beside it);
 *   - docker: /var/lib/docker/containers/ID/config.v2.json, its "Name".
 * Paths are read under /proc/1/root (the host's root from a pod with the
 * host's PID namespace; / elsewhere), each file bounded in size. */
#ifndef PROFCPU_CONTAINER_NAME_H
#define PROFCPU_CONTAINER_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_LENGTH 64

/* Whether `text` can be a container name (letters, digits, '_', '.', '-';
 * not all hex digits, which is an id). */
bool container_name_valid(const char *text);

struct container_ids {
	char (*ids)[CONTAINER_ID_LENGTH + 1]; /* malloc'd */
	size_t count, capacity;
};

/* Adds to `found` the id (64 hex digits) of every container named `name`,
 * running or not, once each. Returns how many it holds. */
size_t container_name_find(const char *name, struct container_ids *found);

/* Whether a container whose id starts with `id_prefix` (at least 12 hex
 * digits) has a name that matches `pattern` (a shell glob). */
bool container_name_matches(const char *id_prefix, const char *pattern);

#endif
