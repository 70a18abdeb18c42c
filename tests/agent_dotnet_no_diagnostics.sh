#!/usr/bin/env bash
# The agent names JIT frames from the runtime's memory (.NET 10 and later)
# where the diagnostics IPC does not answer: a .NET app started with
# DOTNET_EnableDiagnostics=0 (no IPC, no perf map), as hardened images
# run, is named in the profiles it pushes (at least 99% of its samples
# without a [JIT] frame, its hot method in at least 80%). With --names
# memory, so is a second app whose IPC answers, and neither app gets a
# /tmp/perf-PID.map or /tmp/jit-PID.dump. By default (auto) the agent turns
# on the second app's perf map and jitdump (a process that exits within a
# period keeps its names in them: docs/AGENT.md), and names the first from
# its memory.
#
# The agent runs in a PID namespace of its own, with the apps
# (tests/dotnet/HotLoop, niced so the agent's worker keeps some CPU); the
# receiver is the tests' stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_DOTNET_NO_DIAGNOSTICS_INSIDE:-} != 1 ]]; then
	AGENT_DOTNET_NO_DIAGNOSTICS_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$tests_dir/agent_lib.sh"

build_hotloop
start_hotloop DOTNET_EnableDiagnostics=0 nice
hidden=$started_pid
start_hotloop nice
open=$started_pid
compgen -G "/tmp/dotnet-diagnostic-$hidden-*" >/dev/null &&
	fail "the app opened its diagnostics IPC despite DOTNET_EnableDiagnostics=0"

# no_runtime_files PID: fails when the app has a perf map or a jitdump.
no_runtime_files() {
	[[ ! -e /tmp/perf-$1.map && ! -e /tmp/jit-$1.dump ]] ||
		fail "pid $1 has $(ls /tmp/perf-"$1".map /tmp/jit-"$1".dump 2>/dev/null | tr '\n' ' ')"
}

# shares RECEIVED PID: "SAMPLES JIT_PERCENT HOT_PERCENT" of PID in the CPU
# profiles pushed after the first that holds it (the agent chose how to
# name it once it had seen it sampled).
shares() {
	python3 - "$1" "$2" "$tests_dir" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import pprof_samples

received, pid = sys.argv[1], sys.argv[2]
pushes = [[sample for sample in pprof_samples(open(path, "rb").read())
           if sample[0].get("pid") == pid and sample[2]]
          for path in sorted(glob.glob(f"{received}/*.pb.gz"),
                             key=lambda p: int(os.path.basename(p).split(".")[0]))
          if "label.__name__=process_cpu\n" in open(path[:-len(".pb.gz")] + ".query").read()]
total = jit = hot = 0
for push in [push for push in pushes if push][1:]:
    for labels, values, names in push:
        total += values[0]
        jit += values[0] if "[JIT]" in names else 0
        hot += values[0] if any(name.endswith("Demo.Program::HotMethod") for name in names) else 0
print(total, f"{100 * jit / max(total, 1):.1f}", f"{100 * hot / max(total, 1):.1f}")
PY
}

# assert_named PID HOW: fails unless PID's pushed samples are named
# (from its runtime's memory or its perf map, HOW) as the test wants.
assert_named() {
	local total jit hot
	read -r total jit hot < <(shares "$workdir/received" "$1")
	echo "pid $1: $total samples pushed, $jit% with a [JIT] frame, HotMethod in $hot%"
	((total >= 200)) || fail "pid $1: $total samples pushed, the test wants 200"
	awk -v jit="$jit" -v hot="$hot" 'BEGIN { exit !(jit <= 1 && hot >= 80) }' ||
		fail "pid $1 is not named ($2)"
}

echo "--- --names memory: nothing written in either app"
start_receiver_and_agent --push-interval 2 -F 199 --no-events --names memory
wait_periods 6
no_runtime_files "$open"
no_runtime_files "$hidden"
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
cat "$workdir/agent.err"
grep "JIT names of .NET pid\|names from the runtimes' memory" "$workdir/spool/agent.log" | tail -4
for pid in "$hidden" "$open"; do
	grep -q "JIT names of .NET pid $pid: from its runtime's memory" "$workdir/spool/agent.log" ||
		fail "the agent's log does not say it names pid $pid from its runtime's memory"
	assert_named "$pid" "--names memory"
done
grep -q "perf map and jitdump of .NET pid" "$workdir/agent.err" &&
	fail "the agent turned on a perf map with --names memory"

echo "--- the default: the perf map where the IPC answers, the runtime's memory where not"
mv "$workdir/received" "$workdir/received-memory"
mv "$workdir/spool" "$workdir/spool-memory"
start_receiver_and_agent --push-interval 2 -F 199 --no-events
wait_periods 6
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
cat "$workdir/agent.err"
grep "JIT names of .NET pid" "$workdir/spool/agent.log"
grep -q "JIT names of .NET pid $hidden: from its runtime's memory" "$workdir/spool/agent.log" ||
	fail "the agent's log does not say it names pid $hidden from its runtime's memory"
grep -q "JIT names of .NET pid $open: from its perf map, and from its runtime's memory" \
	"$workdir/spool/agent.log" || fail "the agent's log does not say it names pid $open from its perf map"
grep -q "perf map and jitdump of .NET pid $open " "$workdir/agent.err" ||
	fail "the default did not turn on the perf map of pid $open"
no_runtime_files "$hidden"
assert_named "$hidden" "the default, from its runtime's memory"
assert_named "$open" "the default, from its perf map"
echo "ok: named from the runtime's memory with nothing written in the apps (--names memory), and where the IPC does not answer (the default)"
