/* Which container, and which pod, a process runs in, from its cgroup path
 * (a line of /proc/PID/cgroup after its second ':'), as the container
 * runtimes and the kubelet name their cgroups:
 *
 * - podman, cgroupfs: /libpod_parent/<pod id>/libpod-<id>, or
 *   /libpod_parent/libpod-<id> outside a pod
 * - podman, systemd: /machine.slice/machine-libpod_pod_<pod id>.slice/
 *   libpod-<id>.scope[/container]
 * - Docker: /docker/<id>, /system.slice/docker-<id>.scope
 * - Kubernetes, cgroupfs: /kubepods[/burstable|/besteffort]/pod<uid>/<id>
 *   (containerd), .../crio-<id> (CRI-O)
 * - Kubernetes, systemd: /kubepods.slice/kubepods-burstable.slice/
 *   kubepods-burstable-pod<uid, '_' for '-'>.slice/cri-containerd-<id>.scope
 *   (containerd), .../crio-<id>.scope (CRI-O)
 *
 * Container ids are 64 hex digits; a podman pod's id too; a Kubernetes
 * pod's uid is a UUID. A runtime's monitor (conmon) is no container. */
#ifndef PROFCPU_CGROUP_PATH_H
#define PROFCPU_CGROUP_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CGROUP_ID_SIZE 65 /* 64 hex digits, or a 36-character UUID, and a NUL */

/* The container id (64 hex digits) in `path` and the id of its pod: the
 * Kubernetes pod uid (with '-') or the podman pod id, "" when it is in no
 * pod. False, both "", when `path` names no container. */
bool cgroup_path_container(const char *path, char container[CGROUP_ID_SIZE],
			   char pod[CGROUP_ID_SIZE]);

/* The path of the next line ("ID:CONTROLLERS:PATH") of a cgroup file's
 * `*length` bytes at `*text` (/proc/PID/cgroup, any bytes) into `path`,
 * `size` bytes, moving `*text` past that line; lines with no path or one
 * too long are passed over. False at the end. */
bool cgroup_file_next_path(const char **text, size_t *length, char *path, size_t size);

/* The same from the `length` bytes of a cgroup file (/proc/PID/cgroup, any
 * bytes): the first of its lines ("ID:CONTROLLERS:PATH") whose path names a
 * container. */
bool cgroup_file_container(const char *text, size_t length, char container[CGROUP_ID_SIZE],
			   char pod[CGROUP_ID_SIZE]);

/* The first `size` - 1 bytes of /proc/PID/cgroup into `text`, NUL-ended.
 * Returns how many; 0 when it cannot be read. */
size_t cgroup_file_read(pid_t pid, char *text, size_t size);

#endif
