#include "pod_labels.h"

#include "cgroup_path.h"
#include "container_state.h"
#include "kubernetes_name.h"
#include "target_file.h"
#include "target_root.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HOSTNAME_FILE  "/etc/hostname"
#define NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* The characters Kubernetes puts in generated name suffixes (its
 * rand.String): no vowels, no 0, 1 or 3, so that no word is spelled. */
#define GENERATED_ALPHABET "bcdfghjklmnpqrstvwxz2456789"

void pod_labels_parse_cgroup(const char *text, size_t length, char id[13], bool *kubernetes)
{
	char container[CGROUP_ID_SIZE], pod[CGROUP_ID_SIZE];

	cgroup_file_container(text, length, container, pod);
	snprintf(id, 13, "%.12s", container);
	/* A Kubernetes pod's uid is a UUID; a podman pod's id is hex alone. */
	*kubernetes = strchr(pod, '-') != NULL;
}

bool pod_labels_container_id(pid_t pid, char id[13])
{
	char text[4096];
	bool kubernetes;

	pod_labels_parse_cgroup(text, cgroup_file_read(pid, text, sizeof(text)), id, &kubernetes);
	return id[0] != '\0';
}

struct small_text {
	char text[POD_NAME_MAX + 2];
	size_t length;
};

static void keep_text(const char *bytes, size_t length, void *context)
{
	struct small_text *small = context;
	size_t room = sizeof(small->text) - 1 - small->length;

	if (length > room)
		length = room;
	memcpy(small->text + small->length, bytes, length);
	small->length += length;
	small->text[small->length] = '\0';
}

/* Reads the file `path` inside `root_fd` into `value` (size bytes) when it
 * holds one valid name and a newline at most. Returns 1 when it does, 0
 * when there is no such file, or -1 with `why` when its content is refused. */
static int read_name(int root_fd, const char *path, bool dots, char *value, size_t size, char *why,
		     size_t why_size)
{
	struct small_text small = {{0}, 0};
	struct target_file_budget budget = {.max_bytes = sizeof(small.text) - 1,
					    .max_seconds = 0.1};
	int fd = target_file_open(root_fd, path, 0);
	int status;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
			return 0;
		snprintf(why, why_size, "not a regular file (%s)", strerror(errno));
		return -1;
	}
	status = target_file_read(fd, &budget, keep_text, &small);
	close(fd);
	if (status < 0 || budget.stopped_by) {
		snprintf(why, why_size, "%s", status < 0 ? strerror(errno) : "longer than a name");
		return -1;
	}
	while (small.length && isspace((unsigned char)small.text[small.length - 1]))
		small.text[--small.length] = '\0';
	if (small.length >= size || !kubernetes_name_valid(small.text, dots)) {
		snprintf(why, why_size, "not a valid Kubernetes name");
		return -1;
	}
	memcpy(value, small.text, small.length + 1);
	return 1;
}

bool pod_labels_from_container_files(const struct pod_labels *labels)
{
	return labels->namespace_source == POD_LABEL_CONTAINER_FILES ||
	       labels->pod_source == POD_LABEL_CONTAINER_FILES;
}

/* The last resort: the pod's files inside the process's root. */
static void read_container_files(pid_t pid, bool kubernetes, struct pod_labels *labels)
{
	int root_fd = target_root_open(pid);

	if (root_fd < 0)
		return;
	if (read_name(root_fd, NAMESPACE_FILE, false, labels->namespace, sizeof(labels->namespace),
		      labels->refused_why, sizeof(labels->refused_why)) < 0)
		labels->refused_file = NAMESPACE_FILE;
	if (labels->namespace[0])
		labels->namespace_source = POD_LABEL_CONTAINER_FILES;
	kubernetes = kubernetes || labels->namespace[0];
	if (kubernetes && !labels->refused_file &&
	    read_name(root_fd, HOSTNAME_FILE, true, labels->pod, sizeof(labels->pod),
		      labels->refused_why, sizeof(labels->refused_why)) < 0)
		labels->refused_file = HOSTNAME_FILE;
	if (labels->pod[0])
		labels->pod_source = POD_LABEL_CONTAINER_FILES;
	close(root_fd);
}

void pod_labels_read(pid_t pid, const struct string_list *state_folders, struct pod_labels *labels)
{
	char cgroup[4096], id[CGROUP_ID_SIZE];
	size_t length = cgroup_file_read(pid, cgroup, sizeof(cgroup));
	bool kubernetes;

	*labels = (struct pod_labels){0};
	pod_labels_parse_cgroup(cgroup, length, labels->container, &kubernetes);
	if (container_state_id(cgroup, length, id) &&
	    container_state_read(id, state_folders, labels)) {
		/* The container the runtime's state was found for. */
		snprintf(labels->container, sizeof(labels->container), "%.12s", id);
		return;
	}
	read_container_files(pid, kubernetes, labels);
}

/* Whether the `length` characters at `text` could be a generated suffix. */
static bool generated(const char *text, size_t length)
{
	return strspn(text, GENERATED_ALPHABET) >= length;
}

void pod_labels_workload(const char *pod, char *service, size_t size)
{
	size_t length = strlen(pod);
	const char *dash = memrchr(pod, '-', length);

	/* A DaemonSet's or Deployment's pod: NAME-xxxxx, then for a
	 * Deployment the ReplicaSet's template hash before it. */
	if (dash && length - (size_t)(dash - pod) == 6 && generated(dash + 1, 5)) {
		const char *hash;

		length = (size_t)(dash - pod);
		hash = memrchr(pod, '-', length);
		if (hash && length - (size_t)(hash - pod) - 1 >= 6 &&
		    length - (size_t)(hash - pod) - 1 <= 10 &&
		    generated(hash + 1, length - (size_t)(hash - pod) - 1))
			length = (size_t)(hash - pod);
	}
	snprintf(service, size, "%.*s", (int)length, pod);
}
