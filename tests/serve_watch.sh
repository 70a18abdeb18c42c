#!/usr/bin/env bash
# serve --watch, the sidecar's flight recorder: a process calm at a fifth of
# a core in calm_work, then busy in spike_work. POST /watch/trigger during
# the calm writes a capture of calm_work alone; the --cpu rule fires on the
# spike, and its capture, listed by GET /captures and served by
# GET /captures/NAME/FORMAT, holds calm_work over the seconds before the
# spike's first sample and spike_work; a wrong token triggers nothing.
# SIGTERM ends serve and its watch, whose capture under way is written; a
# watch whose target exited is said in GET /watch, reaped, and a trigger
# then gets 409.
source "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"

# The options are checked before anything runs.
status=0
"$PROFCPU" serve --cpu 50 2>"$workdir/stderr" || status=$?
((status == 2)) && grep -q "give --watch PID too" "$workdir/stderr" ||
	fail "a rule without --watch was not refused: $status $(cat "$workdir/stderr")"
status=0
"$PROFCPU" serve --watch no_such_name 2>"$workdir/stderr" || status=$?
((status == 1)) && grep -q "no process has that name" "$workdir/stderr" ||
	fail "--watch of an unknown name was not refused: $status $(cat "$workdir/stderr")"
start sleep 600
status=0
"$PROFCPU" serve --watch "$started_pid" --before 0 -port 0 -o "$workdir/refused" 2>"$workdir/stderr" ||
	status=$?
cat "$workdir/stderr"
((status == 2)) && grep -q "invalid --before 0" "$workdir/stderr" ||
	fail "serve did not relay watch's refusal of --before 0 (exit $status)"
# The .NET rules pass on too: refused by the watch for a process without .NET.
status=0
"$PROFCPU" serve --watch "$started_pid" --threadpool-queue 10 -port 0 -o "$workdir/refused" \
	2>"$workdir/stderr" || status=$?
cat "$workdir/stderr"
((status == 1)) && grep -q -- "--threadpool-queue needs a .NET process" "$workdir/stderr" ||
	fail "serve did not pass --threadpool-queue on to its watch (exit $status)"

spike_threshold
start_calm_then_spike 14 60
target=$started_pid
port=$(free_port)
url=http://127.0.0.1:$port
# Two captures: the manual one and the spike's (the rule fires on through
# the spike, skipped past --max-captures).
PROFCPU_SERVE_TOKEN=s3cret "$PROFCPU" serve -port "$port" -o "$workdir/captures" \
	--watch "$target" --cpu "$threshold" --before 6 --after 2 --cooldown 0 --max-captures 2 --off-cpu \
	>"$workdir/serve.out" 2>"$workdir/serve.err" &
server=$!
background_pids+=("$server")
api() { curl -s -H 'Authorization: Bearer s3cret' "$@"; }
until api -f -o /dev/null "$url/watch"; do
	kill -0 "$server" 2>/dev/null || { cat "$workdir/serve.err"; fail "serve exited"; }
	sleep 0.1
done
# watch_state FIELD: one field of GET /watch, as JSON.
watch_state() {
	api "$url/watch" | python3 -c "import json, sys; print(json.dumps(json.load(sys.stdin)['$1']))"
}
[[ $(watch_state running) == true && $(watch_state target) == "$target" ]] ||
	fail "GET /watch does not say it watches pid $target: $(api "$url/watch")"
watch_pid=$(watch_state pid)

# Without the token, or with a wrong one, nothing is said and nothing fires.
code=$(curl -s -o "$workdir/error.json" -w '%{http_code}' -X POST \
	-H 'Authorization: Bearer wrong' "$url/watch/trigger")
[[ $code == 401 ]] || fail "a wrong token's trigger answered $code"
code=$(curl -s -o "$workdir/error.json" -w '%{http_code}' "$url/watch")
[[ $code == 401 ]] || fail "GET /watch without the token answered $code"
grep -q '"error": "this server needs its token' "$workdir/error.json" || fail "the 401 is no JSON error"
code=$(api -o /dev/null -w '%{http_code}' -X GET "$url/watch/trigger")
[[ $code == 405 ]] || fail "GET /watch/trigger answered $code"

# A manual trigger in the calm, a few seconds into the ring.
sleep 3
[[ $(watch_state triggers) == 0 ]] || fail "something fired before the trigger: $(api "$url/watch")"
code=$(api -o "$workdir/trigger.json" -w '%{http_code}' -X POST "$url/watch/trigger")
[[ $code == 202 ]] || fail "POST /watch/trigger answered $code: $(cat "$workdir/trigger.json")"

# wait_for_capture RULE: the name of the watch's capture by RULE, once
# GET /watch lists it and its folded stacks are written (the watch writes
# the outputs in a child while it samples on).
wait_for_capture() {
	local name=""
	until [[ -n $name ]] && api -f -o /dev/null "$url/captures/$name/folded"; do
		kill -0 "$server" 2>/dev/null || { cat "$workdir/serve.err"; fail "serve exited"; }
		sleep 0.2
		name=$(watch_state captures | python3 -c "import json, sys; print(next((c for c in json.load(sys.stdin) if c.endswith('_$1')), ''))")
	done
	echo "$name"
}
manual=$(wait_for_capture manual)
echo "the manual capture: $manual"
api -f "$url/captures" | grep -q "\"$manual\"" || fail "GET /captures does not list $manual"
api -f -o "$workdir/manual.folded" "$url/captures/$manual/folded"
grep -q ';calm_work [0-9]*$' "$workdir/manual.folded" || fail "the manual capture holds no calm_work"
! grep -q 'spike_work' "$workdir/manual.folded" || fail "the manual capture, in the calm, holds spike_work"
# --off-cpu reached the watch: the calm's 80 ms sleeps, served as offcpu-folded.
api -f -o "$workdir/manual.offcpu" "$url/captures/$manual/offcpu-folded" ||
	fail "the manual capture has no off-CPU stacks (--off-cpu)"
grep -q ';main;.*nanosleep' "$workdir/manual.offcpu" || fail "the off-CPU stacks lack the calm's nanosleep"

# The spike fires the --cpu rule.
spike=$(wait_for_capture cpu)
echo "the spike's capture: $spike"
api -f "$url/captures" | grep -q "\"$spike\"" || fail "GET /captures does not list $spike"
api -f -o "$workdir/spike.folded" "$url/captures/$spike/folded"
api -f -o "$workdir/spike.perf_script" "$url/captures/$spike/perf-script"
grep -q "rule cpu fired: [0-9]*% of one core over the last second (--cpu $threshold)" "$workdir/serve.err" ||
	fail "serve's stderr does not carry the watch's line on the rule"
grep -q ';spike_work [0-9]*$' "$workdir/spike.folded" || fail "no spike_work in the spike's capture"
grep -q ';calm_work [0-9]*$' "$workdir/spike.folded" || fail "no calm_work in the spike's capture"
read -r calm_seconds calm_bins < <(python3 "$tests_dir/watch_samples.py" calm-before-spike \
	"$workdir/spike.perf_script" calm_work spike_work)
echo "calm_work from $calm_seconds s before spike_work's first sample, in each of its last $calm_bins seconds"
python3 -c "import sys; sys.exit(0 if $calm_seconds >= 4 else 1)" ||
	fail "calm_work only $calm_seconds s before the spike's first sample (--before 6)"

kill -TERM "$server"
status=0
wait "$server" || status=$?
cat "$workdir/serve.out" "$workdir/serve.err"
((status == 0)) || fail "serve exited with $status on SIGTERM"
! kill -0 "$watch_pid" 2>/dev/null || fail "the watch (pid $watch_pid) outlived serve"
[[ -z $(find "$workdir/captures" -mindepth 1 -maxdepth 1 -name '.ring*') ]] || fail "the ring was left behind"

# SIGTERM during a capture's --after seconds: serve and the watch end, the
# capture written from what was sampled, cut short. The process is named
# this time.
kill "$target"
wait "$target" 2>/dev/null || true # not left as a zombie of the same name
start_calm_then_spike 600
PROFCPU_SERVE_TOKEN=s3cret "$PROFCPU" serve -port "$port" -o "$workdir/stopped" \
	--watch workload_calm_t --before 3 --after 600 >"$workdir/serve.out" 2>"$workdir/serve.err" &
server=$!
background_pids+=("$server")
until api -f -o /dev/null "$url/watch"; do
	kill -0 "$server" 2>/dev/null || { cat "$workdir/serve.err"; fail "serve exited"; }
	sleep 0.1
done
watch_pid=$(watch_state pid)
[[ $(watch_state target) == "$started_pid" ]] || fail "--watch workload_calm_t watches $(watch_state target), not $started_pid"
sleep 1
api -f -o /dev/null -X POST "$url/watch/trigger" || fail "the trigger failed"
until (($(watch_state triggers) == 1)); do sleep 0.1; done
sleep 1
kill -TERM "$server"
status=0
wait "$server" || status=$?
cat "$workdir/serve.err"
((status == 0)) || fail "serve exited with $status on SIGTERM"
! kill -0 "$watch_pid" 2>/dev/null || fail "the watch (pid $watch_pid) outlived serve"
grep -q 'the watch of pid [0-9]* ended: exited with status 0' "$workdir/serve.err" ||
	fail "serve did not say the watch ended cleanly"
captures=("$workdir"/stopped/*_manual)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
grep -q '^window: .*; cut short by SIGTERM$' "${captures[0]}/profcpu.log" ||
	fail "the capture's log does not say SIGTERM cut it short: $(cat "${captures[0]}/profcpu.log")"
grep -q ';calm_work [0-9]*$' "${captures[0]}/folded_stacks.out" || fail "the capture cut short holds no calm_work"

# A watch whose target exits: said in GET /watch with its last message,
# reaped, and a trigger gets 409.
start sleep 600
sleeper=$started_pid
"$PROFCPU" serve -port "$port" -o "$workdir/ended" --watch "$sleeper" >/dev/null 2>"$workdir/serve.err" &
server=$!
background_pids+=("$server")
until curl -sf -o /dev/null "$url/watch"; do
	kill -0 "$server" 2>/dev/null || { cat "$workdir/serve.err"; fail "serve exited"; }
	sleep 0.1
done
api() { curl -s "$@"; }
watch_pid=$(watch_state pid)
kill "$sleeper"
until [[ $(watch_state running) == false ]]; do sleep 0.1; done
api "$url/watch"
echo
[[ $(watch_state ended) == '"exited with status 0"' ]] || fail "GET /watch does not say how the watch ended"
[[ $(watch_state last_message) != '""' ]] || fail "GET /watch does not give the watch's last message"
[[ ! -e /proc/$watch_pid ]] || fail "the watch (pid $watch_pid) was not reaped: $(cat "/proc/$watch_pid/stat")"
code=$(api -o "$workdir/error.json" -w '%{http_code}' -X POST "$url/watch/trigger")
cat "$workdir/error.json"
[[ $code == 409 ]] && grep -q 'the watch has ended: exited with status 0' "$workdir/error.json" ||
	fail "a trigger after the watch ended answered $code"
kill -TERM "$server"
wait "$server" || fail "serve exited with $? on SIGTERM"
