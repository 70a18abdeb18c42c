/* What profcpu agent reads of a process for its labels: the container id
 * and Kubernetes' pods in its cgroup file, as the runtimes write it;
 * Kubernetes' naming rules; a pod's workload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pod_labels.h"

#include <string.h>

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
	assert_true(pod_labels_valid_name("shop", false));
	assert_true(pod_labels_valid_name("shop-7c6d9b5f8-x2k4q", true));
	assert_true(pod_labels_valid_name("web.example-1", true));
	assert_false(pod_labels_valid_name("web.example", false));
	assert_false(pod_labels_valid_name("a},service_name=x", true));
	assert_false(pod_labels_valid_name("Shop", true));
	assert_false(pod_labels_valid_name("-shop", true));
	assert_false(pod_labels_valid_name("shop.", true));
	assert_false(pod_labels_valid_name("", true));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(finds_the_container_id),
	    cmocka_unit_test(finds_none_outside_a_container),
	    cmocka_unit_test(checks_kubernetes_names),
	    cmocka_unit_test(names_the_workload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
