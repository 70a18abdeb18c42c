#!/usr/bin/env bash
# The agent names JIT frames from the runtime's memory by default (.NET 9
# and later): a .NET app started with DOTNET_EnableDiagnostics=0 (no
# diagnostics IPC, no perf map), as hardened images run, is named in the
# profiles it pushes (at least 99% of its samples without a [JIT] frame,
# its hot method in at least 80%), and so is a second app whose IPC
# answers, in which the agent turns on no perf map: neither app gets a
# /tmp/perf-PID.map or /tmp/jit-PID.dump. Then an agent with --names
# perfmap keeps the old route: it turns on the second app's perf map and
# jitdump, and the first app's frames stay [JIT].
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

echo "--- the default: the runtime's memory"
start_receiver_and_agent --push-interval 2 -F 199 --no-events
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
	read -r total jit hot < <(shares "$workdir/received" "$pid")
	echo "pid $pid: $total samples pushed, $jit% with a [JIT] frame, HotMethod in $hot%"
	((total >= 200)) || fail "pid $pid: $total samples pushed, the test wants 200"
	awk -v jit="$jit" -v hot="$hot" 'BEGIN { exit !(jit <= 1 && hot >= 80) }' ||
		fail "pid $pid is not named from its runtime's memory"
done
grep -q "perf map and jitdump of .NET pid" "$workdir/agent.err" &&
	fail "the agent turned on a perf map with its default route"

echo "--- --names perfmap: the old route"
mv "$workdir/received" "$workdir/received-memory"
mv "$workdir/spool" "$workdir/spool-memory"
start_receiver_and_agent --push-interval 2 -F 199 --no-events --names perfmap
wait_periods 6
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
cat "$workdir/agent.err"
grep -q "perf map and jitdump of .NET pid $open " "$workdir/agent.err" ||
	fail "--names perfmap did not turn on the perf map of pid $open"
[[ -e /tmp/perf-$open.map && -e /tmp/jit-$open.dump ]] ||
	fail "--names perfmap: pid $open has no perf map and jitdump"
read -r total jit hot < <(shares "$workdir/received" "$hidden")
echo "--names perfmap, pid $hidden (no IPC): $total samples pushed, $jit% with a [JIT] frame"
awk -v jit="$jit" 'BEGIN { exit !(jit >= 90) }' ||
	fail "--names perfmap named the JIT frames of the app without IPC"
read -r total jit hot < <(shares "$workdir/received" "$open")
echo "--names perfmap, pid $open: $total samples pushed, $jit% with a [JIT] frame, HotMethod in $hot%"
awk -v jit="$jit" -v hot="$hot" 'BEGIN { exit !(jit <= 1 && hot >= 80) }' ||
	fail "--names perfmap did not name pid $open from its perf map"
echo "ok: named from the runtime's memory with nothing written in the apps; --names perfmap as before"
