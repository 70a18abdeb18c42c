#!/usr/bin/env bash
# Processes that pose as .NET to the agent (each maps a file named
# libcoreclr.so and listens on a diagnostics socket) and, asked for an
# EventPipe session, answer yes and then stream bytes without end, fast,
# ignoring StopTracing: the agent's runtime events are hostile input. Six
# of them, beside a real .NET app (tests/dotnet/EventStacks) throwing
# exceptions. The agent must go on: each period's file of a process stops
# at 64 MiB, a period's files of all processes together stay within
# 256 MiB (the spool's files polled, grouped by the period in their
# names), the bound of all is reached (said in SPOOL/agent.log) and still
# the app's exception profiles hold exactly the exceptions it caught (its
# first MiB a period is its own); the periods are sent, the junk gives no
# runtime profile, and the agent stops when told.
#
# A real .NET runtime cannot be made to do this: the stand-in is a Python
# script speaking the diagnostics IPC's framing (DOTNET_IPC_V1 headers),
# tests/fake_dotnet_runtime.py.
# The agent runs in a PID namespace of its own; the receiver is the tests'
# stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_HOSTILE_RUNTIME_INSIDE:-} != 1 ]]; then
	AGENT_HOSTILE_RUNTIME_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$tests_dir/agent_lib.sh"

build_dotnet_app EventStacks
start_fake_runtimes 6

start_receiver_and_agent --push-interval 3

# The largest size seen of each session file: runtime-PID-PERIOD-SEQ.nettrace,
# only root's (mode 600).
declare -A sizes
poll_sizes() {
	local file size
	for file in "$workdir"/spool/runtime-*.nettrace; do
		[[ -e $file ]] || continue
		size=$(stat -c %s "$file" 2>/dev/null || echo 0)
		[[ $(stat -c %a "$file" 2>/dev/null || echo 600) == 600 ]] || fail "$file is not only root's: $(stat -c %a "$file")"
		((size <= ${sizes[${file##*/}]:-0})) || sizes[${file##*/}]=$size
	done
}

for fake_pid in "${fake_pids[@]}"; do wait_session "$fake_pid"; done
start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go" 150
app_pid=$started_pid app_output=$started_output
wait_session "$app_pid"
touch "$workdir/go"
until grep -q done "$app_output"; do
	kill -0 "$app_pid" 2>/dev/null || { cat "$app_output"; fail "the app exited"; }
	poll_sizes
	sleep 0.2
done
# Until a period begun after the app was done is sent.
wait_sent_after "$(date +%s%3N)" poll_sizes
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
kill "${fake_pids[@]}"
cat "$workdir/agent.err"
grep "stopped at" "$workdir/spool/agent.log" | tail -3

largest=0
declare -A period_bytes
for name in "${!sizes[@]}"; do
	size=${sizes[$name]}
	((size <= largest)) || largest=$size
	period=$(echo "$name" | cut -d- -f3)
	period_bytes[$period]=$((${period_bytes[$period]:-0} + size))
done
largest_period=0
for period in $(printf '%s\n' "${!period_bytes[@]}" | sort -n); do
	echo "period $period: ${period_bytes[$period]} bytes of session files"
	((period_bytes[$period] <= largest_period)) || largest_period=${period_bytes[$period]}
done
echo "the largest session file: $largest bytes; the largest period: $largest_period bytes"
((largest > 0)) || fail "the agent wrote none of the fake runtimes' streams"
((largest <= 64 << 20)) || fail "a session file grew to $largest bytes, past 64 MiB"
((largest_period <= 256 << 20)) || fail "a period's session files grew to $largest_period bytes, past 256 MiB"
grep -q "the bound of all processes' events" "$workdir/spool/agent.log" ||
	fail "no stream was cut by the bound of all processes: the test did not reach it"
grep -q '^label.__name__=process_cpu$' "$workdir"/received/*.query || fail "no CPU profile was pushed"
python3 - "$workdir/received" "$app_pid" "$(awk '$1 == "exceptions" {print $2}' "$app_output")" "$tests_dir" <<'PY' || fail "the app's exceptions were not all pushed beside the hostile streams"
import glob, sys
sys.path.insert(0, sys.argv[4])
from protobuf_wire import pprof_samples

received, pid, caught = sys.argv[1], sys.argv[2], int(sys.argv[3])
pushed = others = 0
for path in glob.glob(received + "/*.query"):
    names = [line for line in open(path) if line.startswith("label.__name__=")]
    if names and names[0].strip().split("=")[1] in ("lock", "exception", "memory"):
        for labels, values, _ in pprof_samples(open(path[:-6] + ".pb.gz", "rb").read()):
            if labels.get("pid") != pid:
                others += 1  # the fake runtimes' junk
            elif names[0].strip().endswith("=exception"):
                pushed += values[0]
print(f"the app's exceptions: {pushed} pushed, it caught {caught}")
assert others == 0, f"{others} runtime profile samples of the fake runtimes were pushed"
assert pushed == caught, f"{pushed} exceptions pushed, the app caught {caught}"
PY
! ls "$workdir"/spool/runtime-*.nettrace 2>/dev/null || fail "the agent left session files in its spool"
echo "ok: six endless hostile streams bounded, each and all together, the app's $(awk '$1 == "exceptions" {print $2}' "$app_output") exceptions pushed"
