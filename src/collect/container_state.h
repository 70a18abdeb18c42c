/* A process's pod labels from its container runtime's own state, which the
 * container cannot write: the OCI config (config.json) the runtime keeps
 * for each container, found by the container id in the cgroup path the
 * kernel gives (/proc/PID/cgroup), and the Kubernetes annotations the
 * runtime puts in it:
 *
 * - containerd: io.kubernetes.cri.sandbox-namespace, -sandbox-name,
 *   -sandbox-uid, -container-name, in its task's bundle,
 *   /run/containerd/io.containerd.runtime.v2.task/k8s.io/ID/config.json
 *   (k3s: under /run/k3s/containerd);
 * - CRI-O: io.kubernetes.pod.namespace, .pod.name, .pod.uid,
 *   .container.name, in /run/containers/storage/overlay-containers/ID/
 *   userdata/config.json and the same under /var/lib/containers/storage
 *   (podman's root storage: podman kube play copies the manifest's pod
 *   annotations there, and keeps no namespace or pod name of its own).
 *
 * The folders are read on the agent's side (the host's, or what it
 * mounts), never inside a container's root. The file is bounded
 * (CONTAINER_STATE_MAX_BYTES), opened only when it is a regular file and
 * not a symlink, and its values are kept only when they are valid
 * Kubernetes names. */
#ifndef PROFCPU_CONTAINER_STATE_H
#define PROFCPU_CONTAINER_STATE_H

#include "cgroup_path.h"
#include "pod_labels.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>

/* An OCI config is a few tens of KiB; a larger file is refused. */
#define CONTAINER_STATE_MAX_BYTES (1024 * 1024)

/* The container id to look up from the `length` bytes of a cgroup file:
 * in each line that names a container, the outermost container cgroup of
 * its path (a container that may write its cgroups can make one named
 * like another container's below its own, never above), the same in every
 * such line. False, `id` "", when none or when two lines disagree. */
bool container_state_id(const char *text, size_t length, char id[CGROUP_ID_SIZE]);

/* The pod labels in the annotations of the OCI config at `text` (`length`
 * bytes, any bytes): namespace, pod, pod_uid and container_name, each
 * only when valid. True when a namespace and a pod name are both found;
 * `labels` is left as it is otherwise. */
bool container_state_parse(const char *text, size_t length, struct pod_labels *labels);

/* Reads the OCI config `path` (a regular file, not through a symlink, at
 * most CONTAINER_STATE_MAX_BYTES) into `labels`, as container_state_parse. */
bool container_state_read_file(const char *path, struct pod_labels *labels);

/* Reads the OCI config of the container `id` (64 hex digits) from the
 * runtimes' usual folders and `folders` (each holding ID/config.json or
 * ID/userdata/config.json; NULL: none) into `labels`, as
 * container_state_parse. False when no config is found or it names no
 * pod. */
bool container_state_read(const char *id, const struct string_list *folders,
			  struct pod_labels *labels);

#endif
