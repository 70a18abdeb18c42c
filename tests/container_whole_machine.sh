#!/usr/bin/env bash
# profcpu collect --container ID from the host, on a real podman container:
# its cgroup is found from the id, and its process is named through its own
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
echo "ok"
