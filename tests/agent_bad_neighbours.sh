#!/usr/bin/env bash
# A node of bad neighbours costs two good .NET apps nothing. Beside the
# good apps (tests/dotnet/EventStacks, each with a thread spinning a
# quarter of the time, so that each of its periods has CPU samples) run,
# all at once:
#   - a .NET app stopped (SIGSTOP) once its session runs: its diagnostics
#     socket accepts and answers nothing;
#   - two stand-ins for a .NET runtime streaming events without end
#     (tests/fake_dotnet_runtime.py);
#   - a process whose anonymous executable mapping starts with MZ and holds
#     a single-file bundle of entries that inflate to nothing
#     (tests/workloads/bomb_bundle.c);
#   - a process on CPU in code whose .eh_frame gives a CFA the unwinder
#     must refuse (tests/workloads/crafted_cfi.c);
#   - a process on CPU in a function whose NativeAOT name nests without
#     end (tests/workloads/deep_name.c).
# The agent pushes every 2 s. Every period from a good app's first
# exception profile to its last has its CPU profile and its exception
# profile, and the periods between them its lock profile too; the
# exceptions pushed are exactly those the app caught; the agent names the
# good apps' spinning method, keeps running and exits when told, and
# leaves no session file in its spool.
#
# The agent runs in a PID namespace of its own, with the processes; the
# receiver is the tests' stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_BAD_NEIGHBOURS_INSIDE:-} != 1 ]]; then
	AGENT_BAD_NEIGHBOURS_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$tests_dir/agent_lib.sh"

build_dotnet_app EventStacks

start_receiver_and_agent --push-interval 2
wait_periods 1
echo "the agent runs (pid $agent_pid); the bad neighbours start"
start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go-stopped" 100000
stopped_pid=$started_pid
wait_session "$stopped_pid"
kill -STOP "$stopped_pid"
start_fake_runtimes 2
# The native ones spin without end: at the lowest priority, they leave the
# CPUs to the agent and the good apps, and are still sampled.
start nice -n 19 "$WORKLOAD_BOMB_BUNDLE" "$workdir"
bomb_pid=$started_pid
start nice -n 19 "$WORKLOAD_CRAFTED_CFI"
crafted_cfi_pid=$started_pid
start nice -n 19 "$WORKLOAD_DEEP_NAME"
deep_name_pid=$started_pid
for fake_pid in "${fake_pids[@]}"; do wait_session "$fake_pid"; done
echo "bad neighbours: stopped $stopped_pid, fake runtimes ${fake_pids[*]}, bomb bundle $bomb_pid," \
	"crafted CFI $crafted_cfi_pid, deep name $deep_name_pid; the good apps start"

# The good apps.
good_pids=() good_outputs=()
for good in 1 2; do
	start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go-good" 200 spin
	good_pids+=("$started_pid") good_outputs+=("$started_output")
	wait_session "$started_pid"
done
touch "$workdir/go-good"
echo "good apps ${good_pids[*]} run their rounds"
for i in 0 1; do
	until grep -q done "${good_outputs[$i]}"; do
		agent_runs
		kill -0 "${good_pids[$i]}" 2>/dev/null || { cat "${good_outputs[$i]}"; fail "the good app ${good_pids[$i]} exited"; }
		sleep 0.2
	done
done
wait_sent_after "$(date +%s%3N)"
for pid in "$bomb_pid" "$crafted_cfi_pid" "$deep_name_pid" "${fake_pids[@]}"; do
	kill -0 "$pid" 2>/dev/null || fail "the bad neighbour $pid exited: it tested nothing"
done
kill -CONT "$stopped_pid"
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
cat "$workdir/agent.err"
grep "^runtime events" "$workdir/spool/agent.log" | grep -v "EventPipe session\|bytes$" || true

for i in 0 1; do
	caught=$(awk '$1 == "exceptions" {print $2}' "${good_outputs[$i]}")
	echo "good app ${good_pids[$i]} caught $caught exceptions"
	python3 - "$workdir/received" "${good_pids[$i]}" "$caught" "$tests_dir" <<'PY' ||
import collections, glob, os, sys
sys.path.insert(0, sys.argv[4])
from protobuf_wire import pprof_samples

received, pid, caught = sys.argv[1], sys.argv[2], int(sys.argv[3])
# The pushes in the order they came, grouped by period: a period's CPU
# profiles come first, then its runtime profiles.
periods = []  # [{__name__: (value summed, names seen)}]
for path in sorted(glob.glob(received + "/*.query"), key=lambda p: int(os.path.basename(p)[:-6])):
    query = dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)
    samples = [(values, names) for labels, values, names
               in pprof_samples(open(path[:-6] + ".pb.gz", "rb").read()) if labels.get("pid") == pid]
    if not samples:
        continue
    name = query["label.__name__"]
    if name == "process_cpu" or not periods or name in periods[-1]:
        periods.append({})
    periods[-1][name] = (sum(values[0] for values, _ in samples),
                         {frame for _, names in samples for frame in names})
print("profiles of each period:", [sorted(period) for period in periods])
throwing = [i for i, period in enumerate(periods) if "exception" in period]
assert len(throwing) >= 4, f"the app threw in {len(throwing)} periods only: too few to tell"
first, last = throwing[0], throwing[-1]
for i in range(first, last + 1):
    for name in ("process_cpu", "exception") + (("lock",) if first < i < last else ()):
        assert name in periods[i], f"period {i} of {len(periods)} has no {name} profile"
pushed = sum(period["exception"][0] for period in periods if "exception" in period)
assert pushed == caught, f"{pushed} exceptions pushed, the app caught {caught}"
unspun = [i for i in range(first, last + 1)
          if not any(frame.endswith("Demo.Program::Spin") for frame in periods[i]["process_cpu"][1])]
for i in unspun:
    print(f"period {i}: no Spin among", sorted(periods[i]["process_cpu"][1]))
assert not unspun, f"Spin not named in periods {unspun} of {first}..{last}"
print(f"ok: periods {first}..{last}: CPU and exceptions every period, {pushed} exceptions")
PY
		fail "the good app ${good_pids[$i]} lost profiles beside the bad neighbours"
done
# The native neighbours were sampled and pushed: they were looked at.
python3 - "$workdir/received" "$tests_dir" "$bomb_pid" "$crafted_cfi_pid" "$deep_name_pid" <<'PY' ||
import glob, sys
sys.path.insert(0, sys.argv[2])
from protobuf_wire import pprof_samples
pushed = set()
for path in glob.glob(sys.argv[1] + "/*.query"):
    if "label.__name__=process_cpu\n" in open(path).read():
        pushed |= {labels.get("pid") for labels, _, _ in pprof_samples(open(path[:-6] + ".pb.gz", "rb").read())}
missing = [pid for pid in sys.argv[3:] if pid not in pushed]
assert not missing, f"no CPU profile of the bad neighbours {missing}"
PY
	fail "the agent did not sample every bad neighbour"
! ls "$workdir"/spool/runtime-*.nettrace 2>/dev/null || fail "the agent left session files in its spool"
echo "ok: the bad neighbours cost the good apps no period"
