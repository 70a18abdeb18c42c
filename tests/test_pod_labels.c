/* What profcpu agent reads of a process for its labels: the container id
 * and Kubernetes' pods in its cgroup file, as the runtimes write it; the
 * pod's labels in the OCI config a container runtime keeps for it
 * (container_state.h), and how a hostile or broken one is refused;
 * Kubernetes' naming rules; a pod's workload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "container_state.h"
#include "pod_labels.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONTAINER_ID "4f9a1c2b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"

/* The annotations containerd 1.7 writes into a container's bundle, in the
 * shape of a whole OCI config (abridged). */
static const char containerd_config[] =
    "{\"ociVersion\":\"1.1.0\",\"process\":{\"args\":[\"/app\"],\"env\":[\"A=b\"]},"
    "\"root\":{\"path\":\"rootfs\"},\"annotations\":{"
    "\"io.kubernetes.cri.container-name\":\"api\","
    "\"io.kubernetes.cri.container-type\":\"container\","
    "\"io.kubernetes.cri.image-name\":\"registry.example/shop/api:1.2\","
    "\"io.kubernetes.cri.sandbox-id\":\"0a1b2c\","
    "\"io.kubernetes.cri.sandbox-name\":\"api-7c6d9b5f8-x2k4q\","
    "\"io.kubernetes.cri.sandbox-namespace\":\"shop\","
    "\"io.kubernetes.cri.sandbox-uid\":\"3f1c2b7a-9d4e-4c1a-8f2b-1a2b3c4d5e6f\"},"
    "\"linux\":{\"cgroupsPath\":\"kubepods-burstable-pod3f1c2b7a_9d4e_4c1a_8f2b_"
    "1a2b3c4d5e6f.slice:cri-containerd:" CONTAINER_ID "\"}}";

static bool parse_config(const char *text, struct pod_labels *labels)
{
	*labels = (struct pod_labels){0};
	return container_state_parse(text, strlen(text), labels);
}

static void parse(const char *text, char id[13], bool *kubernetes)
{
	pod_labels_parse_cgroup(text, strlen(text), id, kubernetes);
}

static void finds_the_container_id(void **state)
{
	char id[13];
	bool kubernetes;

	(void)state;
	parse("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f1c2b7a_9d4e_"
	      "4c1a_8f2b_1a2b3c4d5e6f.slice/cri-containerd-4f9a1c2b3d4e5f60718293a4b5c6d7e8f90a1b"
	      "2c3d4e5f60718293a4b5c6d7e8.scope\n",
	      id, &kubernetes);
	assert_string_equal(id, "4f9a1c2b3d4e");
	assert_true(kubernetes);
	parse("0::/machine.slice/libpod-0c3e6f8a9b1d2c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a"
	      "4b5c6.scope/container\n",
	      id, &kubernetes);
	assert_string_equal(id, "0c3e6f8a9b1d");
	assert_false(kubernetes);
	/* The id ends the file, without a newline. */
	parse("12:pids:/docker/9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081",
	      id, &kubernetes);
	assert_string_equal(id, "9a8b7c6d5e4f");
}

static void finds_none_outside_a_container(void **state)
{
	char id[13];
	bool kubernetes;

	(void)state;
	parse("0::/user.slice/user-0.slice/session-1.scope\n", id, &kubernetes);
	assert_string_equal(id, "");
	assert_false(kubernetes);
	/* 65 hex digits are no id, nor 63. */
	parse("0::/x/9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819\n", id,
	      &kubernetes);
	assert_string_equal(id, "");
	parse("0::/x/9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708\n", id,
	      &kubernetes);
	assert_string_equal(id, "");
	parse("", id, &kubernetes);
	assert_string_equal(id, "");
}

static void checks_kubernetes_names(void **state)
{
	(void)state;
	assert_true(kubernetes_name_valid("shop", false));
	assert_true(kubernetes_name_valid("shop-7c6d9b5f8-x2k4q", true));
	assert_true(kubernetes_name_valid("web.example-1", true));
	assert_false(kubernetes_name_valid("web.example", false));
	assert_false(kubernetes_name_valid("a},service_name=x", true));
	assert_false(kubernetes_name_valid("Shop", true));
	assert_false(kubernetes_name_valid("-shop", true));
	assert_false(kubernetes_name_valid("shop.", true));
	assert_false(kubernetes_name_valid("", true));
}

static void names_the_workload(void **state)
{
	char service[POD_NAME_MAX + 1];

	(void)state;
	pod_labels_workload("checkout-7d9f8b4c6-x2k4q", service, sizeof(service));
	assert_string_equal(service, "checkout"); /* a Deployment's pod */
	pod_labels_workload("node-agent-x2k4q", service, sizeof(service));
	assert_string_equal(service, "node-agent"); /* a DaemonSet's */
	pod_labels_workload("billing-0", service, sizeof(service));
	assert_string_equal(service, "billing-0"); /* a StatefulSet's: its own */
	pod_labels_workload("shop-aeiou", service, sizeof(service));
	assert_string_equal(service, "shop-aeiou"); /* vowels: not generated */
}

static void reads_the_runtimes_annotations(void **state)
{
	struct pod_labels labels;

	(void)state;
	assert_true(parse_config(containerd_config, &labels));
	assert_string_equal(labels.namespace, "shop");
	assert_string_equal(labels.pod, "api-7c6d9b5f8-x2k4q");
	assert_string_equal(labels.pod_uid, "3f1c2b7a-9d4e-4c1a-8f2b-1a2b3c4d5e6f");
	assert_string_equal(labels.container_name, "api");
	assert_int_equal(labels.namespace_source, POD_LABEL_RUNTIME);
	assert_int_equal(labels.pod_source, POD_LABEL_RUNTIME);
	assert_false(pod_labels_from_container_files(&labels));
	/* CRI-O's names. */
	assert_true(
	    parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"billing\","
			 "\"io.kubernetes.pod.name\":\"billing-0\","
			 "\"io.kubernetes.pod.uid\":\"0b1c2d3e-0000-4000-8000-00000000abcd\","
			 "\"io.kubernetes.container.name\":\"worker\","
			 "\"io.kubernetes.cri-o.ContainerType\":\"container\"}}",
			 &labels));
	assert_string_equal(labels.namespace, "billing");
	assert_string_equal(labels.pod, "billing-0");
	assert_string_equal(labels.container_name, "worker");
}

static void finds_no_pod_where_the_runtime_keeps_none(void **state)
{
	struct pod_labels labels;

	(void)state;
	/* podman 4.3's own annotations for a container of `podman kube play`:
	 * no namespace, no pod name. */
	assert_false(
	    parse_config("{\"annotations\":{\"io.container.manager\":\"libpod\","
			 "\"io.kubernetes.cri-o.ContainerType\":\"container\","
			 "\"io.kubernetes.cri-o.SandboxID\":"
			 "\"2c676a0b8985f0a21b98bc5f26b5a38e431c1772f2c9e5c2b7382bf38691ebb7\","
			 "\"io.podman.annotations.autoremove\":\"FALSE\"}}",
			 &labels));
	assert_string_equal(labels.namespace, "");
	assert_int_equal(labels.namespace_source, POD_LABEL_NONE);
	/* A namespace without a pod name, or the reverse, is no pod. */
	assert_false(parse_config(
	    "{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":\"shop\"}}", &labels));
	assert_false(
	    parse_config("{\"annotations\":{\"io.kubernetes.pod.name\":\"shop-0\"}}", &labels));
	/* No annotations, or not an object. */
	assert_false(parse_config("{\"ociVersion\":\"1.1.0\"}", &labels));
	assert_false(parse_config("{\"annotations\":[\"io.kubernetes.pod.namespace\"]}", &labels));
	assert_false(parse_config("[]", &labels));
}

static void refuses_what_is_no_valid_label(void **state)
{
	struct pod_labels labels;
	char *deep = calloc(1, 40001);

	(void)state;
	/* Names Kubernetes would never give: a label's syntax, a NUL, a type. */
	assert_false(parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"Shop\","
				  "\"io.kubernetes.pod.name\":\"shop-0\"}}",
				  &labels));
	assert_false(parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"shop\","
				  "\"io.kubernetes.pod.name\":\"a},service_name=x\"}}",
				  &labels));
	assert_false(
	    parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"sh\\u0000x\","
			 "\"io.kubernetes.pod.name\":\"shop-0\"}}",
			 &labels));
	assert_false(parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":7,"
				  "\"io.kubernetes.pod.name\":\"shop-0\"}}",
				  &labels));
	/* A uid or a container name that is not valid is left out alone. */
	assert_true(parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"shop\","
				 "\"io.kubernetes.pod.name\":\"shop-0\","
				 "\"io.kubernetes.pod.uid\":\"../../x\","
				 "\"io.kubernetes.container.name\":\"A B\"}}",
				 &labels));
	assert_string_equal(labels.pod_uid, "");
	assert_string_equal(labels.container_name, "");
	/* Cut short, or nested past any OCI config's depth. */
	assert_false(parse_config("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"shop\","
				  "\"io.kubernetes.pod.name\":\"shop-0\"}",
				  &labels));
	assert_non_null(deep);
	memset(deep, '[', 20000);
	memset(deep + 20000, ']', 20000);
	assert_false(parse_config(deep, &labels));
	free(deep);
}

static void finds_the_outermost_container(void **state)
{
	char id[CGROUP_ID_SIZE];
	const char *nested =
	    "0::/kubepods/burstable/pod3f1c2b7a-9d4e-4c1a-8f2b-1a2b3c4d5e6f/" CONTAINER_ID
	    "/9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081\n";

	(void)state;
	/* A container that may write its cgroups made one named like another
	 * container below its own: its own id is still the one read. */
	assert_true(container_state_id(nested, strlen(nested), id));
	assert_string_equal(id, CONTAINER_ID);
	/* Two hierarchies that name two containers name none. */
	nested = "4:cpu:/docker/" CONTAINER_ID
		 "\n0::/docker/9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081\n";
	assert_false(container_state_id(nested, strlen(nested), id));
	assert_string_equal(id, "");
	/* podman's pod id is no container. */
	nested =
	    "0::/libpod_parent/636ad5e0282ad449cc3055bcda6e7c625fcf9cf39b20cda2ee5b65a93ff2855c/"
	    "libpod-" CONTAINER_ID "\n";
	assert_true(container_state_id(nested, strlen(nested), id));
	assert_string_equal(id, CONTAINER_ID);
}

/* Writes `text` into FOLDER/CONTAINER_ID/userdata/config.json. */
static void write_config(const char *folder, const char *text)
{
	char path[512];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", folder, CONTAINER_ID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/userdata", folder, CONTAINER_ID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/userdata/config.json", folder, CONTAINER_ID);
	unlink(path);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	fclose(file);
}

static void reads_the_config_in_a_state_folder(void **state)
{
	char folder[] = "/tmp/profcpu-container-state-XXXXXX", path[512], target[512];
	struct string_list folders = {0};
	struct pod_labels labels = {0};
	FILE *file;

	(void)state;
	assert_non_null(mkdtemp(folder));
	string_list_append(&folders, folder);
	write_config(folder, containerd_config);
	assert_true(container_state_read(CONTAINER_ID, &folders, &labels));
	assert_string_equal(labels.namespace, "shop");
	/* Not a folder's id. */
	assert_false(container_state_read("../" CONTAINER_ID, &folders, &labels));
	/* A symlink to a config is not followed. */
	snprintf(path, sizeof(path), "%s/%s/userdata/config.json", folder, CONTAINER_ID);
	snprintf(target, sizeof(target), "%s/elsewhere.json", folder);
	rename(path, target);
	assert_int_equal(symlink(target, path), 0);
	assert_false(container_state_read(CONTAINER_ID, &folders, &labels));
	/* A FIFO is not opened (it would block). */
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_false(container_state_read(CONTAINER_ID, &folders, &labels));
	/* A file past the bound is not read, whatever it holds. */
	unlink(path);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(containerd_config, file);
	for (size_t i = 0; i < CONTAINER_STATE_MAX_BYTES; i += 8)
		fputs("        ", file);
	fclose(file);
	assert_false(container_state_read(CONTAINER_ID, &folders, &labels));
	unlink(path);
	unlink(target);
	snprintf(path, sizeof(path), "%s/%s/userdata", folder, CONTAINER_ID);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/%s", folder, CONTAINER_ID);
	rmdir(path);
	rmdir(folder);
	string_list_clear(&folders);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(finds_the_container_id),
	    cmocka_unit_test(finds_none_outside_a_container),
	    cmocka_unit_test(checks_kubernetes_names),
	    cmocka_unit_test(names_the_workload),
	    cmocka_unit_test(reads_the_runtimes_annotations),
	    cmocka_unit_test(finds_no_pod_where_the_runtime_keeps_none),
	    cmocka_unit_test(refuses_what_is_no_valid_label),
	    cmocka_unit_test(finds_the_outermost_container),
	    cmocka_unit_test(reads_the_config_in_a_state_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
