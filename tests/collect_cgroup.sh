#!/usr/bin/env bash
# profcpu collect --cgroup: a C workload in a cgroup made here is sampled, a
# second one outside it is not, and a child the first starts while sampling
# is (PERF_FLAG_PID_CGROUP follows the cgroup, not a process tree).
source "$(dirname "$0")/lib.sh"

make_test_cgroup
cgroup=$test_cgroup

# Inside: workload_split at once, workload_deep_recursion once sampling runs.
start bash -c "echo \$\$ >'$cgroup/cgroup.procs' && { '$WORKLOAD_SPLIT' 120 & } &&
	until [[ -e '$workdir/go' ]]; do sleep 0.1; done && '$WORKLOAD_DEEP_RECURSION' 120"
start "$WORKLOAD_FRAMELESS" 120 # outside
until grep -q . "$cgroup/cgroup.procs" && (($(wc -l <"$cgroup/cgroup.procs") >= 2)); do sleep 0.1; done

"$PROFCPU" collect --cgroup "$cgroup" -duration 5 -F 499 -o "$workdir/out" 2>"$workdir/stderr" &
profcpu_pid=$!
until grep -q "sampling every CPU" "$workdir/stderr" || ! kill -0 $profcpu_pid 2>/dev/null; do sleep 0.1; done
sleep 1
touch "$workdir/go"
wait $profcpu_pid || { cat "$workdir/stderr"; fail "profcpu collect --cgroup failed"; }

out=$workdir/out/folded_stacks.out
folded top "$out" 6
samples=$(folded total "$out")
((samples >= 50)) || fail "only $samples samples of the cgroup's busy processes"
# Stacks start with their process (NAME-PID); each process is named in its own frames.
assert_share "$out" '^workload_split-[0-9]+;.*;worker;path_[ab];spin_(sixty|thirty)$' 20 100
# comm holds 15 characters: workload_deep_r.
assert_share "$out" '^workload_deep_r[a-z_]*-[0-9]+;.*;spin_at_the_bottom$' 3 80
assert_share "$out" 'workload_frameless|leaf_work' 0 0

# --container finds the cgroup by a part of its directory's name, as of a
# podman or docker id (this cgroup stands in for a container's).
"$PROFCPU" collect --container "${cgroup##*/profcpu-}" -duration 1 -F 499 -o "$workdir/by-id" 2>"$workdir/by-id.err" ||
	{ cat "$workdir/by-id.err"; fail "profcpu collect --container failed"; }
assert_share "$workdir/by-id/folded_stacks.out" '^workload_split-[0-9]+;' 20 100
"$PROFCPU" collect --container no-such-container-id -duration 1 -o "$workdir/none" 2>"$workdir/none.err" &&
	fail "--container with an unknown id succeeded"
grep -q "no container (podman, CRI-O, containerd, docker) and no cgroup under .* names it" "$workdir/none.err" ||
	fail "no one-line error for an unknown container"
echo "ok: $samples samples, only from the cgroup"
