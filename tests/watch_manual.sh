#!/usr/bin/env bash
# The manual trigger and the limits: SIGUSR1 takes a capture of the last
# --before seconds and the --after ones, whose profile goes to --push's
# server (pyroscope_receiver.py stands in for Pyroscope) and, as
# OpenTelemetry profiles, to --otlp's (another pyroscope_receiver.py, an
# OTLP/HTTP receiver too); past
# --max-captures a trigger is said and skipped; SIGTERM ends the watch with
# the captures written and the ring removed. With --off-cpu, a capture has
# the off-CPU and wall outputs: a thread that sleeps a millisecond at a
# time (tests/workloads/run_states.c) is off the CPU for nearly all of the
# window, in sleep_often.
source "$(dirname "$0")/lib.sh"

# The OTLP receiver's credentials without --otlp: refused in one line.
status=0
"$PROFCPU" watch -pid $$ --otlp-header 'X-Team: a' -o "$workdir/refused" 2>"$workdir/refused.err" || status=$?
((status == 2)) && grep -q "are the --otlp receiver's: give --otlp URL" "$workdir/refused.err" ||
	fail "--otlp-header without --otlp was not refused: $status $(cat "$workdir/refused.err")"

port=$(free_port)
mkdir "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
otlp_port=$(free_port)
mkdir "$workdir/otlp"
start python3 "$tests_dir/pyroscope_receiver.py" "$otlp_port" "$workdir/otlp" ok
until [[ -e $workdir/received/ready && -e $workdir/otlp/ready ]]; do sleep 0.1; done

start "$WORKLOAD_TWO_LOOPS"
target=$started_pid
"$PROFCPU" watch -pid "$target" --before 3 --after 1 --max-captures 1 --cooldown 0 \
	--push "http://127.0.0.1:$port" --otlp "http://127.0.0.1:$otlp_port" -o "$workdir/out" >"$workdir/stdout" 2>"$workdir/stderr" &
watch=$!
until grep -q 'sampling pid' "$workdir/stderr"; do sleep 0.1; done
# More than --before seconds of samples in the ring, whatever the load.
until (($(cpu_ticks "$target") > 500)); do sleep 0.5; done
kill -USR1 "$watch"
until grep -q '^profcpu: flame graph: ' "$workdir/stdout"; do sleep 0.2; done
kill -USR1 "$watch"
until grep -q 'no capture is taken' "$workdir/stderr"; do sleep 0.2; done
kill -TERM "$watch"
status=0
wait "$watch" || status=$?
cat "$workdir/stderr"
((status == 0)) || fail "watch exited with $status after SIGTERM"
grep -q 'rule manual fired: SIGUSR1' "$workdir/stderr" || fail "no line says SIGUSR1 fired"
grep -q 'rule manual fired but no capture is taken: --max-captures captures in the last hour' \
	"$workdir/stderr" || fail "the second trigger was not said to be over --max-captures"
captures=("$workdir"/out/*_manual)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
[[ -z $(find "$workdir/out" -mindepth 1 -maxdepth 1 -name '.ring*') ]] || fail "the ring was left in $workdir/out"
capture=${captures[0]}
grep -q '^window: 3.0 s before the trigger, 1.0 s after$' "$capture/profcpu.log" ||
	fail "the capture's log does not give its window"
assert_share "$capture/folded_stacks.out" 'two_loops' 90 100
# The window holds the last 3 s and the next one: the busy target's samples
# cover most of it and never more.
span=$(python3 "$tests_dir/watch_samples.py" span "$capture/perf_script.out")
echo "the samples span $span s of the 4 s window"
python3 -c "import sys; sys.exit(0 if 2.5 <= $span <= 4.05 else 1)" || fail "the samples span $span s"
# The one capture's profile, and only it, went to the server.
[[ -s $workdir/received/1.pb.gz && ! -e $workdir/received/2.query ]] ||
	fail "the receiver did not get exactly one profile"
cmp -s "$workdir/received/1.pb.gz" "$capture/profile.pb.gz" || fail "--push sent another profile than the capture's"
grep -qx 'label.service_name=workload_two_lo' "$workdir/received/1.query" ||
	fail "the pushed profile is not named after the process: $(grep service_name "$workdir/received/1.query")"
# And one OTLP request, of the target's samples: its resource's process.pid
# and as many samples as the capture's perf.data holds.
[[ -s $workdir/otlp/1.otlp && ! -e $workdir/otlp/2.query ]] ||
	fail "the OTLP receiver did not get exactly one request: $(ls "$workdir/otlp")"
grep -qx 'path=/v1development/profiles' "$workdir/otlp/1.query" || fail "the OTLP request went to another path"
samples=$(awk '$1 == "samples:" {print $2}' "$capture/profcpu.log")
read -r otlp_pid otlp_samples < <(python3 - "$workdir/otlp/1.otlp" "$tests_dir" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from protobuf_wire import fields, message, packed
request = message(open(sys.argv[1], "rb").read())
pids, samples = set(), 0
for resource_profiles in request[1]:
    resource_profiles = message(resource_profiles)
    for pair in message(resource_profiles[1][0]).get(1, []):
        pair = dict(fields(pair))
        if pair[1] == b"process.pid":
            pids.add(dict(fields(pair[2]))[3])
    for scope in resource_profiles.get(2, []):
        for profile in message(scope).get(2, []):
            for sample in message(profile).get(2, []):
                samples += sum(sum(packed(values)) for values in message(sample).get(4, []))
print(",".join(map(str, sorted(pids))), samples)
PY
)
echo "OTLP: pid $otlp_pid, $otlp_samples samples; the capture: pid $target, $samples samples"
[[ $otlp_pid == "$target" ]] || fail "the OTLP request's process is $otlp_pid, not $target"
((otlp_samples == samples && samples > 0)) || fail "the OTLP request holds $otlp_samples samples, the capture $samples"

# --off-cpu: the switches in the ring, and the capture's off-CPU outputs.
start "$WORKLOAD_RUN_STATES" 120 1
target=$started_pid
"$PROFCPU" watch -pid "$target" --off-cpu --before 2 --after 1 --once -o "$workdir/off" \
	>"$workdir/off.out" 2>"$workdir/off.err" &
watch=$!
until grep -q 'sampling pid' "$workdir/off.err"; do sleep 0.1; done
# The ring holds more than --before seconds, whatever the load: the
# spinner's CPU time passes three seconds.
until (($(cpu_ticks "$target") > 300)); do sleep 0.5; done
kill -USR1 "$watch"
status=0
wait "$watch" || status=$?
cat "$workdir/off.err"
((status == 0)) || fail "watch --off-cpu exited with $status"
captures=("$workdir"/off/*_manual)
((${#captures[@]} == 1)) || fail "expected one --off-cpu capture, found: ${captures[*]}"
off=${captures[0]}/offcpu_folded_stacks.out
assert_file "$off"
assert_file "${captures[0]}/wall_folded_stacks.out"
# The spinning threads' preempted time grows with the machine's load: the
# sleeper's share of the off-CPU time falls (95% idle, 60% at a load of 5).
assert_share "$off" 'sleeper;.*sleep_often' 30 100
# Its weights are microseconds: the sleeper is off the CPU for most of the
# 3 s window, and not much more (a sleep that began before the window
# counts whole; the ring's seconds joined twice would give 6 s).
asleep=$(folded count "$off" 'sleeper;.*sleep_often')
echo "the sleeper was off the CPU $asleep us of the 3 s window"
((asleep > 2000000 && asleep <= 3500000)) || fail "the sleeper was off the CPU $asleep us of 3 s"
