/* The container and the pod of a process from its cgroup path, for each
 * runtime and cgroup driver, as their documentation and real machines name
 * them: podman (cgroupfs and systemd, in a pod and not), Docker, and
 * Kubernetes with containerd and CRI-O (cgroupfs and systemd drivers). Real
 * podman pods are read in tests/container_pod.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cgroup_path.h"

#include <stdio.h>
#include <string.h>

#define ID     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD_ID "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID    "6b8f7a3e-1d2c-4b5a-9e8f-7a6b5c4d3e2f"
#define UID_   "6b8f7a3e_1d2c_4b5a_9e8f_7a6b5c4d3e2f"

struct cgroup_case {
	const char *runtime, *path, *container, *pod;
};

static const struct cgroup_case cases[] = {
    {"podman cgroupfs, in a pod", "/libpod_parent/" POD_ID "/libpod-" ID, ID, POD_ID},
    {"podman cgroupfs, no pod", "/libpod_parent/libpod-" ID, ID, ""},
    {"podman cgroupfs, a pod's conmon", "/libpod_parent/" POD_ID "/conmon", "", ""},
    {"podman systemd, in a pod",
     "/machine.slice/machine-libpod_pod_" POD_ID ".slice/libpod-" ID ".scope", ID, POD_ID},
    {"podman systemd, in a pod, cgroup v2's child",
     "/machine.slice/machine-libpod_pod_" POD_ID ".slice/libpod-" ID ".scope/container", ID,
     POD_ID},
    {"podman systemd, no pod", "/machine.slice/libpod-" ID ".scope", ID, ""},
    {"podman systemd, conmon", "/machine.slice/libpod-conmon-" ID ".scope", "", ""},
    {"podman rootless",
     "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", ID, ""},
    {"Docker cgroupfs", "/docker/" ID, ID, ""},
    {"Docker systemd", "/system.slice/docker-" ID ".scope", ID, ""},
    {"Kubernetes containerd cgroupfs, burstable", "/kubepods/burstable/pod" UID "/" ID, ID, UID},
    {"Kubernetes containerd cgroupfs, guaranteed", "/kubepods/pod" UID "/" ID, ID, UID},
    {"Kubernetes containerd systemd",
     "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
     ".slice/cri-containerd-" ID ".scope",
     ID, UID},
    {"Kubernetes CRI-O cgroupfs", "/kubepods/burstable/pod" UID "/crio-" ID, ID, UID},
    {"Kubernetes CRI-O systemd",
     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-" ID
     ".scope",
     ID, UID},
    {"Kubernetes CRI-O systemd, conmon",
     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-conmon-" ID
     ".scope",
     "", ""},
    {"Kubernetes guaranteed systemd",
     "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope", ID, UID},
    {"no container: a user session", "/user.slice/user-0.slice/session-3.scope", "", ""},
    {"no container: the root", "/", "", ""},
    {"a 64-digit name that is no container", "/srv/" ID "x", "", ""},
};

static void each_runtime_names_its_container_and_pod(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char container[CGROUP_ID_SIZE], pod[CGROUP_ID_SIZE];
		bool found = cgroup_path_container(cases[i].path, container, pod);

		print_message("%s\n", cases[i].runtime);
		assert_int_equal(found, cases[i].container[0] != '\0');
		assert_string_equal(container, cases[i].container);
		assert_string_equal(pod, cases[i].pod);
	}
}

static void a_proc_cgroup_line_ends_at_its_newline(void **state)
{
	char container[CGROUP_ID_SIZE], pod[CGROUP_ID_SIZE];

	(void)state;
	assert_true(cgroup_path_container("/docker/" ID "\n", container, pod));
	assert_string_equal(container, ID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_runtime_names_its_container_and_pod),
	    cmocka_unit_test(a_proc_cgroup_line_ends_at_its_newline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
