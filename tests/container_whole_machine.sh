#!/usr/bin/env bash
# profcpu collect --container ID from the host, on a real podman container:
# its cgroup is found from the id (12 hex digits as podman ps shows it, 64
# as kubectl does with its runtime's scheme, or the container's name read
# from the runtime's state), and its process is named through its own
# root: the JIT frame from the perf map in the container's /tmp (named for
# pid 1, its pid inside), the native frames from a binary the host does not
# have at that path.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

import_jit_target localhost/jit-target
id=$(run -d --name "target-$$" localhost/jit-target /bin/workload) || skip "podman cannot run containers here"
[[ ! -e /bin/workload ]] || skip "this host has a /bin/workload of its own"
sleep 1

"$PROFCPU" collect --container "${id:0:12}" -duration 3 -F 499 -o "$workdir/out" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "profcpu collect --container failed"; }
cat "$workdir/stderr"
out=$workdir/out/folded_stacks.out
folded top "$out" 3
assert_share "$out" '^workload-[0-9]+;(.*;)?main;(.*;)?call_generated;jitted_busy_loop\[Generated\]$' 80 100

# kubectl's form (containerd://, 64 hex digits) and the name podman gave it,
# found in its storage's containers.json (this test's own storage, named as
# storage.conf names a graphroot).
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\n' "$workdir/storage" >"$workdir/storage.conf"
export CONTAINERS_STORAGE_CONF=$workdir/storage.conf
for container in "containerd://$id" "target-$$"; do
	"$PROFCPU" collect --container "$container" -duration 1 -F 499 -o "$workdir/by-$container" \
		2>"$workdir/stderr" || { cat "$workdir/stderr"; fail "profcpu collect --container $container failed"; }
	assert_share "$workdir/by-$container/folded_stacks.out" '^workload-[0-9]+;' 80 100
done
# A name no container has: one line, nothing sampled.
"$PROFCPU" collect --container "istio-proxy-$$" -duration 1 -o "$workdir/none" 2>"$workdir/stderr" &&
	fail "--container with a name no container has succeeded"
cat "$workdir/stderr"
grep -q "no container (podman, CRI-O, containerd, docker) and no cgroup" "$workdir/stderr" ||
	fail "no one-line error for a name no container has"
echo "ok"
