#!/usr/bin/env bash
# A capture of every process of a cgroup (collect --cgroup, as -a and
# --container) names each .NET 9+ process's JIT code from its runtime's
# memory: an app started with DOTNET_EnableDiagnostics=0 (no IPC, no perf
# map) in the cgroup has no [JIT] frame beyond 1% of its samples, its hot
# method named in at least 80%, and no file written; with --names perfmap
# its frames stay [JIT], as before. A process that loads its runtime after
# its first sample (tests/workloads/slow_start.c: 2 s on the CPU before the
# host's main) is looked at again, and its JIT frames named from then on.
source "$(dirname "$0")/lib.sh"

build_hotloop
make_test_cgroup
cgroup=$test_cgroup
output=$workdir/hotloop.out
start bash -c "echo \$\$ >'$cgroup/cgroup.procs' &&
	exec env DOTNET_EnableDiagnostics=0 dotnet '$workdir/bin/hotloop.dll' 60 >'$output'"
pid=$started_pid
until grep -q ready "$output" 2>/dev/null; do
	kill -0 "$pid" 2>/dev/null || fail "the app exited before it was ready"
	sleep 0.1
done

"$PROFCPU" collect --cgroup "$cgroup" -duration 4 -F 199 -o "$workdir/memory" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "collect --cgroup failed"; }
out=$workdir/memory/folded_stacks.out
folded top "$out" 5
assert_share "$out" '\[JIT\]' 0 1
assert_share "$out" ';hotloop!Demo\.Program::HotMethod(;|$)' 80 100
grep "names from the runtime's memory" "$workdir/memory/profcpu.log" ||
	fail "the log does not say what was named from the runtime's memory"
[[ ! -e /tmp/perf-$pid.map && ! -e /tmp/jit-$pid.dump ]] || fail "the app has a perf map or a jitdump"

"$PROFCPU" collect --cgroup "$cgroup" -duration 2 -F 199 --names perfmap -o "$workdir/perfmap" \
	2>"$workdir/stderr" || { cat "$workdir/stderr"; fail "collect --cgroup --names perfmap failed"; }
assert_share "$workdir/perfmap/folded_stacks.out" '\[JIT\]' 90 100
kill "$pid"
wait "$pid" 2>/dev/null || true

echo "--- a runtime loaded after the process's first sample"
late_output=$workdir/late.out
start bash -c "echo \$\$ >'$cgroup/cgroup.procs' &&
	exec env LD_PRELOAD='$WORKLOAD_SLOW_START' SLOW_START_SECONDS=2 DOTNET_EnableDiagnostics=0 \
	dotnet '$workdir/bin/hotloop.dll' 60 >'$late_output'"
late_pid=$started_pid
"$PROFCPU" collect --cgroup "$cgroup" -duration 12 -o "$workdir/late" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "collect --cgroup failed on the late runtime"; }
grep -q ready "$late_output" || fail "the late app was not ready within the capture"
out=$workdir/late/folded_stacks.out
folded top "$out" 5
assert_share "$out" 'slow_start_spin' 1 90
# looked at again 1, 3 and 7 s after its first sample: named from its
# runtime's first seconds, or at the latest for the capture's last 5 s
assert_share "$out" ';hotloop!Demo\.Program::HotMethod(;|$)' 15 100
kill "$late_pid"
echo "ok: every .NET process of a capture named from its runtime's memory"
