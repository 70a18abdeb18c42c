#!/usr/bin/env bash
# A stopped .NET process costs no other its runtime profiles. The agent
# pushes every 2 s; two .NET apps (tests/dotnet/EventStacks, as
# tests/agent_runtime_profiles.sh runs it) have their sessions; one is
# stopped (SIGSTOP: its diagnostics socket accepts and answers nothing, and
# a cut of its session waits seconds on it), then the other throws its
# exceptions. Every period the running app's CPU profile is pushed in,
# from its first exception profile to its last, has its exception profile
# too; they hold exactly the exceptions it caught; the stopped one's loss
# is said in SPOOL/agent.log with its pid, and no session file is left.
#
# The agent runs in a PID namespace of its own, with the apps; the receiver
# is the tests' stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_STOPPED_NEIGHBOUR_INSIDE:-} != 1 ]]; then
	AGENT_STOPPED_NEIGHBOUR_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$tests_dir/agent_lib.sh"

build_dotnet_app EventStacks

# start_app NAME ROUNDS: the app, waiting for $workdir/go-NAME to run ROUNDS
# rounds; returns once its session runs; its pid in $app_pid, its output in
# $app_output.
start_app() {
	start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go-$1" "$2"
	app_pid=$started_pid app_output=$started_output
	wait_session "$app_pid"
}

start_receiver_and_agent --push-interval 2 --events exceptions
wait_periods 1

start_app stopped 100000
stopped_pid=$app_pid
start_app running 400
running_pid=$app_pid running_output=$app_output
kill -STOP "$stopped_pid"
touch "$workdir/go-running"
until grep -q done "$running_output"; do
	kill -0 "$running_pid" 2>/dev/null || { cat "$running_output"; fail "the running app exited"; }
	sleep 0.2
done
wait_sent_after "$(date +%s%3N)"
kill -CONT "$stopped_pid"
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
cat "$workdir/agent.err"
grep "^runtime events" "$workdir/spool/agent.log" | grep -v "EventPipe session\|bytes$" || true
caught=$(awk '$1 == "exceptions" {print $2}' "$running_output")
echo "stopped: pid $stopped_pid, running: pid $running_pid, which caught $caught exceptions"

python3 - "$workdir/received" "$running_pid" "$caught" "$tests_dir" <<'PY' || fail "the running app lost runtime profiles beside the stopped one"
import glob, os, sys
sys.path.insert(0, sys.argv[4])
from protobuf_wire import pprof_samples

received, pid, caught = sys.argv[1], sys.argv[2], int(sys.argv[3])
# The pushes in the order they came: each period's CPU profiles come
# before its runtime profiles.
pushes = []
for path in sorted(glob.glob(received + "/*.query"), key=lambda p: int(os.path.basename(p)[:-6])):
    query = dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)
    samples = [values for labels, values, _ in pprof_samples(open(path[:-6] + ".pb.gz", "rb").read())
               if labels.get("pid") == pid]
    if samples:
        pushes.append((query["label.__name__"], sum(values[0] for values in samples)))
# Each period of the app: the exceptions pushed in it (None: no exception
# profile).
periods = []
for name, value in pushes:
    if name == "process_cpu":
        periods.append(None)
    elif name == "exception" and periods and periods[-1] is None:
        periods[-1] = value
    elif name == "exception":  # a period the app had no CPU sample in
        periods.append(value)
print("exceptions pushed in each period of the running app:", periods)
throwing = [i for i, value in enumerate(periods) if value is not None]
assert throwing, "no exception profile of the running app was pushed"
lost = [i for i in range(throwing[0], throwing[-1] + 1) if periods[i] is None]
assert not lost, f"periods {lost} of {len(periods)} have no exception profile of the running app"
assert len(throwing) >= 4, f"the app threw in {len(throwing)} periods only: too few to tell"
pushed = sum(value for value in periods if value is not None)
assert pushed == caught, f"{pushed} exceptions pushed, the app caught {caught}"
PY
grep "pid $stopped_pid" "$workdir/spool/agent.log" | grep -q "dropped" ||
	fail "the agent did not say the stopped app's runtime events were dropped"
grep "pid $stopped_pid" "$workdir/spool/agent.log" | grep "dropped"
! ls "$workdir"/spool/runtime-*.nettrace 2>/dev/null || fail "the agent left session files in its spool"
echo "ok: the stopped app cost the running one no period of its exceptions ($caught)"
