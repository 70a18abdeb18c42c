#!/usr/bin/env bash
# A .NET app whose runtime loads seconds after it started (a host slow to
# start on a loaded node, a container's entry script that execs dotnet)
# still gets its JIT code named (from its runtime's memory, .NET 9+) and
# its runtime events. The dotnet host spins 6 s
# in a preloaded library (tests/workloads/slow_start.c) before its main:
# the agent, pushing every 2 s, samples it and looks for its runtime before
# it has one. Once the runtime runs, the agent records its events, the
# exceptions it pushes are exactly those the app caught, and its CPU
# profiles name the app's Spin method.
#
# The agent runs in a PID namespace of its own, with the app; the receiver
# is the tests' stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_LATE_RUNTIME_INSIDE:-} != 1 ]]; then
	AGENT_LATE_RUNTIME_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$tests_dir/agent_lib.sh"

build_dotnet_app EventStacks
start_receiver_and_agent --push-interval 2
wait_periods 1
start_until_ready env LD_PRELOAD="$WORKLOAD_SLOW_START" SLOW_START_SECONDS=6 \
	dotnet "$workdir/EventStacks/eventstacks.dll" "$workdir/go" 100 spin
app_pid=$started_pid app_output=$started_output
wait_session "$app_pid"
touch "$workdir/go"
until grep -q done "$app_output"; do
	agent_runs
	kill -0 "$app_pid" 2>/dev/null || { cat "$app_output"; fail "the app exited"; }
	sleep 0.2
done
wait_sent_after "$(date +%s%3N)"
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }

caught=$(awk '$1 == "exceptions" {print $2}' "$app_output")
python3 - "$workdir/received" "$app_pid" "$caught" "$tests_dir" <<'PY' ||
import glob, sys
sys.path.insert(0, sys.argv[4])
from protobuf_wire import pprof_samples

received, pid, caught = sys.argv[1], sys.argv[2], int(sys.argv[3])
frames, exceptions = set(), 0
for path in glob.glob(received + "/*.query"):
    query = dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)
    for labels, values, names in pprof_samples(open(path[:-6] + ".pb.gz", "rb").read()):
        if labels.get("pid") != pid:
            continue
        if query["label.__name__"] == "process_cpu":
            frames |= set(names)
        elif query["label.__name__"] == "exception":
            exceptions += values[0]
# The test's premise: the agent sampled the host before its runtime loaded.
assert any("slow_start_spin" in frame for frame in frames), "the slow start was not sampled"
assert any(frame.endswith("Demo.Program::Spin") for frame in frames), \
    "Spin not named: the agent did not name the runtime's JIT code"
assert exceptions == caught, f"{exceptions} exceptions pushed, the app caught {caught}"
print(f"ok: the slow start sampled, Spin named, {exceptions} of {caught} exceptions")
PY
	fail "the app whose runtime loaded late lost its runtime profiles"
echo "ok: the agent looked again for a runtime that loaded late"
