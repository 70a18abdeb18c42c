#include "container_name.h"
#include "container_state.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A runtime's state file: containers.json grows by about 1 KB a container,
 * docker's config.v2.json is a few KB. */
#define MAX_STATE_FILE	(64u << 20)
#define NAME_MAX_LENGTH 253

#define CONTAINERD_TASKS  "/run/containerd/io.containerd.runtime.v2.task"
#define DOCKER_CONTAINERS "/var/lib/docker/containers"
#define DEFAULT_GRAPHROOT "/var/lib/containers/storage"

/* What each (id, name) pair found is given to. */
struct visit {
	const char *id_prefix; /* only ids starting with it; "" for all */
	bool (*take)(struct visit *visit, const char *id, const char *name);
	const char *name_or_pattern;
	struct container_ids *found;
	bool matched;
};

bool container_name_valid(const char *text)
{
	size_t length = strlen(text);

	return length > 0 && length <= NAME_MAX_LENGTH &&
	       strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
		   length &&
	       strspn(text, "0123456789abcdef") != length;
}

/* The host's root: /proc/1/root from a pod that shares the host's PID
 * namespace, where /run and /var/lib are the host's. */
static const char *host_root(void)
{
	return access("/proc/1/root/", X_OK) == 0 ? "/proc/1/root" : "";
}

static bool is_id(const char *text, size_t length)
{
	return length == CONTAINER_ID_LENGTH && strspn(text, "0123456789abcdef") >= length;
}

/* Hands `id` (64 characters at `id`) and the `length` bytes of `name` to
 * `visit` when the id has its prefix and the name is a plain one. */
static void offer(struct visit *visit, const char *id, const char *name, size_t length)
{
	char id_text[CONTAINER_ID_LENGTH + 1], name_text[NAME_MAX_LENGTH + 1];

	if (length > NAME_MAX_LENGTH || strncmp(id, visit->id_prefix, strlen(visit->id_prefix)))
		return;
	memcpy(id_text, id, CONTAINER_ID_LENGTH);
	id_text[CONTAINER_ID_LENGTH] = '\0';
	memcpy(name_text, name, length);
	name_text[length] = '\0';
	if (container_name_valid(name_text) && visit->take(visit, id_text, name_text))
		visit->matched = true;
}

/* containers/storage's containers.json, as Go writes it:
 * [{"id":"ID","names":["NAME",...],...},...]. */
static void read_containers_json(const char *path, struct visit *visit)
{
	size_t size;
	char *text = (char *)read_whole_file(path, O_NOFOLLOW, MAX_STATE_FILE, &size);

	for (char *entry = text; entry && (entry = strstr(entry, "{\"id\":\""));) {
		char *id = entry + 7, *names, *end, *next;

		entry = id;
		next = strstr(id, "{\"id\":\"");
		/* Its own names, not the next container's. */
		if (!is_id(id, strnlen(id, CONTAINER_ID_LENGTH)) ||
		    id[CONTAINER_ID_LENGTH] != '"' || !(names = strstr(id, "\"names\":[")) ||
		    (next && names > next) || !(end = strchr(names, ']')))
			continue;
		for (char *name = names + 9; name < end && *name == '"';) {
			char *close = memchr(name + 1, '"', (size_t)(end - name - 1));

			if (!close)
				break;
			offer(visit, id, name + 1, (size_t)(close - name - 1));
			name = close + 1 + (close[1] == ',');
		}
	}
	free(text);
}

/* The graphroot that storage.conf names (graphroot = "PATH"), malloc'd,
 * or NULL. */
static char *configured_graphroot(const char *root)
{
	const char *conf = getenv("CONTAINERS_STORAGE_CONF");
	char *path =
	    xasprintf("%s%s", conf ? "" : root, conf ? conf : "/etc/containers/storage.conf");
	size_t size;
	char *text = (char *)read_whole_file(path, 0, 1 << 20, &size), *graphroot = NULL;

	for (char *line = text; line && !graphroot;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char value[4096];

		if (sscanf(line, " graphroot = \"%4095[^\"\n]\"", value) == 1)
			graphroot = xstrdup(value);
	}
	free(text);
	free(path);
	return graphroot;
}

/* Every DRIVER-containers/containers.json under `graphroot`. */
static void read_graphroot(const char *root, const char *graphroot, struct visit *visit)
{
	char *path = xasprintf("%s%s", root, graphroot);
	DIR *directory = opendir(path);
	struct dirent *entry;

	while (directory && (entry = readdir(directory))) {
		size_t length = strlen(entry->d_name);

		if (length > 11 && !strcmp(entry->d_name + length - 11, "-containers")) {
			char *file = xasprintf("%s/%s/containers.json", path, entry->d_name);

			read_containers_json(file, visit);
			free(file);
		}
	}
	if (directory)
		closedir(directory);
	free(path);
}

/* Docker's config.v2.json: the string value after "Name":"/, handed to
 * `visit` as the name of `id`. */
static void read_docker_name(const char *path, const char *id, struct visit *visit)
{
	static const char key[] = "\"Name\":\"/";
	size_t size;
	char *text = (char *)read_whole_file(path, O_NOFOLLOW, MAX_STATE_FILE, &size);
	char *value = text ? strstr(text, key) : NULL, *close;

	if (value && (close = strchr(value += strlen(key), '"')))
		offer(visit, id, value, (size_t)(close - value));
	free(text);
}

/* A containerd task's bundle config.json, read and parsed as the pod
 * labels are (container_state.h): its Kubernetes container name. */
static void read_containerd_name(const char *path, const char *id, struct visit *visit)
{
	struct pod_labels labels = {0};

	if (container_state_read_file(path, &labels) && labels.container_name[0])
		offer(visit, id, labels.container_name, strlen(labels.container_name));
}

/* Each ID folder of `folder` whose id has the visit's prefix: its file
 * `file`, the name in it as `read` finds it. */
static void read_id_folders(const char *folder, const char *file,
			    void (*read)(const char *path, const char *id, struct visit *visit),
			    struct visit *visit)
{
	DIR *directory = opendir(folder);
	struct dirent *entry;

	while (directory && (entry = readdir(directory))) {
		char *path;

		if (!is_id(entry->d_name, strlen(entry->d_name)) ||
		    strncmp(entry->d_name, visit->id_prefix, strlen(visit->id_prefix)))
			continue;
		path = xasprintf("%s/%s/%s", folder, entry->d_name, file);
		read(path, entry->d_name, visit);
		free(path);
	}
	if (directory)
		closedir(directory);
}

static void visit_every_runtime(struct visit *visit)
{
	const char *root = host_root();
	char *graphroot = configured_graphroot(root), *path;
	DIR *namespaces;
	struct dirent *entry;

	read_graphroot(root, DEFAULT_GRAPHROOT, visit);
	if (graphroot && strcmp(graphroot, DEFAULT_GRAPHROOT))
		read_graphroot(root, graphroot, visit);
	free(graphroot);

	path = xasprintf("%s%s", root, CONTAINERD_TASKS);
	namespaces = opendir(path);
	while (namespaces && (entry = readdir(namespaces))) {
		if (entry->d_name[0] != '.') {
			char *folder = xasprintf("%s/%s", path, entry->d_name);

			read_id_folders(folder, "config.json", read_containerd_name, visit);
			free(folder);
		}
	}
	if (namespaces)
		closedir(namespaces);
	free(path);

	path = xasprintf("%s%s", root, DOCKER_CONTAINERS);
	read_id_folders(path, "config.v2.json", read_docker_name, visit);
	free(path);
}

/* CRI-O names a Kubernetes container k8s_NAME_POD_NAMESPACE_UID_ATTEMPT. */
static bool names_it(const char *name, const char *wanted)
{
	size_t length = strlen(wanted);

	return !strcmp(name, wanted) ||
	       (!strncmp(name, "k8s_", 4) && !strncmp(name + 4, wanted, length) &&
		name[4 + length] == '_');
}

static bool take_named(struct visit *visit, const char *id, const char *name)
{
	struct container_ids *found = visit->found;

	if (!names_it(name, visit->name_or_pattern))
		return false;
	for (size_t i = 0; i < found->count; i++)
		if (!strcmp(found->ids[i], id))
			return true;
	grow_array((void **)&found->ids, &found->capacity, found->count + 1, sizeof(*found->ids));
	memcpy(found->ids[found->count++], id, CONTAINER_ID_LENGTH + 1);
	return true;
}

size_t container_name_find(const char *name, struct container_ids *found)
{
	struct visit visit = {
	    .id_prefix = "", .take = take_named, .name_or_pattern = name, .found = found};

	if (container_name_valid(name))
		visit_every_runtime(&visit);
	return found->count;
}

static bool take_matching(struct visit *visit, const char *id, const char *name)
{
	const char *kubernetes_name = name;
	char short_name[NAME_MAX_LENGTH + 1];

	(void)id;
	/* CRI-O's k8s_NAME_...: the pattern is for NAME. */
	if (!strncmp(name, "k8s_", 4) && strchr(name + 4, '_')) {
		snprintf(short_name, sizeof(short_name), "%.*s",
			 (int)(strchr(name + 4, '_') - name - 4), name + 4);
		kubernetes_name = short_name;
	}
	return fnmatch(visit->name_or_pattern, name, 0) == 0 ||
	       fnmatch(visit->name_or_pattern, kubernetes_name, 0) == 0;
}

bool container_name_matches(const char *id_prefix, const char *pattern)
{
	struct visit visit = {
	    .id_prefix = id_prefix, .take = take_matching, .name_or_pattern = pattern};

	if (strlen(id_prefix) < 12)
		return false;
	visit_every_runtime(&visit);
	return visit.matched;
}
