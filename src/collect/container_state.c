#include "container_state.h"

#include "target_file.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An OCI config nests a handful of levels; deeper input is refused
 * before it costs anything. */
#define JSON_MAX_DEPTH 16

/* The folders each runtime keeps its containers' configs in: ID/config.json
 * or ID/userdata/config.json under each. */
static const char *const usual_folders[] = {
    "/run/containerd/io.containerd.runtime.v2.task/k8s.io",
    "/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io",
    "/run/containers/storage/overlay-containers",
    "/var/lib/containers/storage/overlay-containers",
};

/* Each runtime's names for the pod's namespace, name and uid and the
 * container's name. */
static const struct annotation_names {
	const char *namespace, *pod, *pod_uid, *container_name;
} runtimes[] = {
    {"io.kubernetes.cri.sandbox-namespace", "io.kubernetes.cri.sandbox-name",
     "io.kubernetes.cri.sandbox-uid", "io.kubernetes.cri.container-name"}, /* containerd */
    {"io.kubernetes.pod.namespace", "io.kubernetes.pod.name", "io.kubernetes.pod.uid",
     "io.kubernetes.container.name"}, /* CRI-O */
};

/* The outermost container of the cgroup path `path` (NUL-ended): the
 * shortest of its prefixes, a component at a time, that names one. */
static bool outermost_container(const char *path, char id[CGROUP_ID_SIZE])
{
	char prefix[1024], pod[CGROUP_ID_SIZE];
	size_t length = strlen(path);

	for (size_t end = 1; end <= length; end++) {
		if (end < length && path[end] != '/')
			continue;
		memcpy(prefix, path, end);
		prefix[end] = '\0';
		if (cgroup_path_container(prefix, id, pod))
			return true;
	}
	return false;
}

bool container_state_id(const char *text, size_t length, char id[CGROUP_ID_SIZE])
{
	char path[1024], line_id[CGROUP_ID_SIZE];

	id[0] = '\0';
	while (cgroup_file_next_path(&text, &length, path, sizeof(path))) {
		if (!outermost_container(path, line_id))
			continue;
		if (id[0] && strcmp(id, line_id)) {
			id[0] = '\0';
			return false;
		}
		memcpy(id, line_id, sizeof(line_id));
	}
	return id[0] != '\0';
}

/* The string value of `key` in `annotations` when it is valid by `valid`
 * and fits `size` bytes, into `value`; else `value` stays "". */
static void take(json_object *annotations, const char *key, bool (*valid)(const char *),
		 char *value, size_t size)
{
	json_object *item;
	const char *text;

	value[0] = '\0';
	if (!json_object_object_get_ex(annotations, key, &item) ||
	    !json_object_is_type(item, json_type_string))
		return;
	text = json_object_get_string(item);
	/* A NUL inside the JSON string would cut it short: refused. */
	if ((size_t)json_object_get_string_len(item) != strlen(text) || strlen(text) >= size ||
	    !valid(text))
		return;
	memcpy(value, text, strlen(text) + 1);
}

static bool valid_label(const char *name)
{
	return kubernetes_name_valid(name, false);
}

static bool valid_subdomain(const char *name)
{
	return kubernetes_name_valid(name, true);
}

/* A Kubernetes uid is a UUID: hex digits and '-'. */
static bool valid_uid(const char *uid)
{
	return uid[0] && strspn(uid, "0123456789abcdef-") == strlen(uid);
}

bool container_state_parse(const char *text, size_t length, struct pod_labels *labels)
{
	struct json_tokener *tokener = json_tokener_new_ex(JSON_MAX_DEPTH);
	json_object *config, *annotations;
	bool found = false;

	if (!tokener || length > CONTAINER_STATE_MAX_BYTES) {
		if (tokener)
			json_tokener_free(tokener);
		return false;
	}
	config = json_tokener_parse_ex(tokener, text, (int)length);
	if (config && json_tokener_get_error(tokener) == json_tokener_success &&
	    json_object_object_get_ex(config, "annotations", &annotations) &&
	    json_object_is_type(annotations, json_type_object)) {
		for (size_t i = 0; i < sizeof(runtimes) / sizeof(*runtimes) && !found; i++) {
			struct pod_labels read = *labels;

			take(annotations, runtimes[i].namespace, valid_label, read.namespace,
			     sizeof(read.namespace));
			take(annotations, runtimes[i].pod, valid_subdomain, read.pod,
			     sizeof(read.pod));
			if (!read.namespace[0] || !read.pod[0])
				continue;
			take(annotations, runtimes[i].pod_uid, valid_uid, read.pod_uid,
			     sizeof(read.pod_uid));
			take(annotations, runtimes[i].container_name, valid_label,
			     read.container_name, sizeof(read.container_name));
			read.namespace_source = read.pod_source = POD_LABEL_RUNTIME;
			*labels = read;
			found = true;
		}
	}
	json_object_put(config);
	json_tokener_free(tokener);
	return found;
}

struct config_text {
	char *bytes;
	size_t length;
};

static void keep_bytes(const char *bytes, size_t length, void *context)
{
	struct config_text *config = context;

	if (length > CONTAINER_STATE_MAX_BYTES + 1 - config->length)
		length = CONTAINER_STATE_MAX_BYTES + 1 - config->length;
	memcpy(config->bytes + config->length, bytes, length);
	config->length += length;
}

bool container_state_read_file(const char *path, struct pod_labels *labels)
{
	/* One byte over the bound: a file that fills it is too long. */
	struct target_file_budget budget = {.max_bytes = CONTAINER_STATE_MAX_BYTES + 1,
					    .max_seconds = 0.5};
	struct config_text config = {NULL, 0};
	int fd = target_file_open(-1, path, O_NOFOLLOW);
	bool found = false;

	if (fd < 0)
		return false;
	config.bytes = malloc(CONTAINER_STATE_MAX_BYTES + 1);
	if (config.bytes && target_file_read(fd, &budget, keep_bytes, &config) == 0 &&
	    !budget.stopped_by && config.length <= CONTAINER_STATE_MAX_BYTES)
		found = container_state_parse(config.bytes, config.length, labels);
	close(fd);
	free(config.bytes);
	return found;
}

static bool read_in_folder(const char *folder, const char *id, struct pod_labels *labels)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/config.json", folder, id);
	if (container_state_read_file(path, labels))
		return true;
	snprintf(path, sizeof(path), "%s/%s/userdata/config.json", folder, id);
	return container_state_read_file(path, labels);
}

bool container_state_read(const char *id, const struct string_list *folders,
			  struct pod_labels *labels)
{
	/* The id names a folder: 64 hex digits and nothing else. */
	if (strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64)
		return false;
	for (size_t i = 0; folders && i < folders->count; i++)
		if (read_in_folder(folders->items[i], id, labels))
			return true;
	for (size_t i = 0; i < sizeof(usual_folders) / sizeof(*usual_folders); i++)
		if (read_in_folder(usual_folders[i], id, labels))
			return true;
	return false;
}
