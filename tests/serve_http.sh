#!/usr/bin/env bash
# profcpu ps and profcpu serve on the host, against a real .NET app: what
# the sidecar test does not cover (each error of the HTTP API, the folded
# output, a clean stop on SIGTERM), under the sanitizers of this build.
source "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"

build_hotloop
start_hotloop
app=$started_pid

# ps: the app with its runtime version; collect's wrong pid points to ps.
"$PROFCPU" ps | tee "$workdir/ps.txt"
grep -qE "^ *$app +$app  dotnet +\.NET 1[0-9]\.[0-9]+" "$workdir/ps.txt" || fail "ps does not show the .NET app"
# A process whose name has a quote, a backslash and a tab stays valid JSON.
odd_name=$'say"hi\\\tx'
cp "$(command -v sleep)" "$workdir/$odd_name"
start "$workdir/$odd_name" 60
"$PROFCPU" ps -json >"$workdir/ps.json"
python3 - "$workdir/ps.json" "$app" "$started_pid" <<'PY' || fail "ps -json is not valid JSON with the app and the odd name"
import json, sys
processes = {p["pid"]: p for p in json.load(open(sys.argv[1]))["processes"]}
assert processes[int(sys.argv[2])]["runtime"] == ".NET"
print(repr(processes[int(sys.argv[3])]["name"]))
assert processes[int(sys.argv[3])]["name"].startswith('say"hi\\')
PY
status=0
"$PROFCPU" collect -pid 999999999 -duration 1 -o "$workdir/none" 2>"$workdir/stderr" || status=$?
grep -q "'profcpu ps' lists" "$workdir/stderr" || fail "a wrong pid does not point to profcpu ps"

port=$(free_port)
"$PROFCPU" serve -port "$port" -o "$workdir/captures" >"$workdir/serve.out" 2>&1 &
server=$!
background_pids+=("$server")
url=http://127.0.0.1:$port
until curl -sf -o /dev/null "$url/processes"; do
	kill -0 "$server" || { cat "$workdir/serve.out"; fail "serve exited"; }
	sleep 0.1
done

# expect_error METHOD PATH CODE MESSAGE: a JSON error with that status.
expect_error() {
	local code
	code=$(curl -s -X "$1" -o "$workdir/error.json" -w '%{http_code}' "$url$2")
	echo "$1 $2 -> $code $(cat "$workdir/error.json")"
	[[ $code == "$3" ]] || fail "$1 $2 answered $code, not $3"
	python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['error'])" "$workdir/error.json" |
		grep -q "$4" || fail "$1 $2 did not say '$4'"
}
expect_error POST /captures 400 'pid=N'
expect_error POST "/captures?pid=$app&seconds=0" 400 'seconds must be'
expect_error POST "/captures?pid=$app&format=jpeg" 400 'unknown format'
expect_error POST "/captures?pid=999999999" 404 'no process with pid'
expect_error DELETE /captures 405 "POST /captures"
expect_error GET /metrics 404 'no such endpoint'
expect_error GET /captures/..%2Fetc/svg 400 'not a capture name'
expect_error GET /captures/nothing/svg 404 'no capture named nothing'
expect_error GET /watch 404 'runs no watch: start it with --watch PID'
expect_error POST /watch/trigger 404 'runs no watch'
# collect's options: checked by the server, the rest by collect; never one
# of collect's own options smuggled in a value.
expect_error POST "/captures?pid=$app&frequency=0" 400 'frequency must be'
expect_error POST "/captures?pid=$app&off_cpu=yes" 400 'off_cpu must be'
expect_error POST "/captures?pid=$app&call_graph=lbr" 400 'call_graph must be'
expect_error POST "/captures?pid=$app&events=--push=http://x" 400 'events must be'
expect_error POST "/captures?pid=$app&seconds=1&events=gc,bogus" 400 "^unknown -events item 'bogus'"

# A capture as folded stacks: HotMethod has the time.
curl -sf -X POST -D "$workdir/headers" -o "$workdir/capture.folded" \
	"$url/captures?pid=$app&seconds=2&format=folded" || fail "the capture failed"
assert_share "$workdir/capture.folded" 'Demo\.Program::HotMethod' 70 100
capture=$(tr -d '\r' <"$workdir/headers" | awk -F': ' 'tolower($1) == "x-profcpu-capture" {print $2}')

# pprof: served once profcpu writes profile.pb.gz, a clear 404 before.
if [[ -f "$workdir/captures/$capture/profile.pb.gz" ]]; then
	curl -sf -o "$workdir/profile.pb.gz" "$url/captures/$capture/pprof" || fail "no pprof"
	gzip -t "$workdir/profile.pb.gz" || fail "the pprof answer is no gzip file"
else
	expect_error GET "/captures/$capture/pprof" 404 'does not write that format'
fi

# collect's options reach the capture (events as the refusal above shows):
# 499 Hz and off-CPU stacks; the wall flame graph and the nettrace served.
curl -sf -X POST -D "$workdir/headers" -o "$workdir/wall.svg" \
	"$url/captures?pid=$app&seconds=2&frequency=499&off_cpu=1&events=exceptions&format=wall" ||
	fail "the capture with collect's options failed"
grep -q '<svg' "$workdir/wall.svg" || fail "format=wall is no SVG"
capture=$(tr -d '\r' <"$workdir/headers" | awk -F': ' 'tolower($1) == "x-profcpu-capture" {print $2}')
grep -q " at 499 Hz" "$workdir/captures/$capture/profcpu.log" || fail "frequency=499 did not reach collect"
[[ -s $workdir/captures/$capture/offcpu_folded_stacks.out ]] || fail "off_cpu=1 did not reach collect"
curl -sf -o "$workdir/runtime.nettrace" "$url/captures/$capture/nettrace" || fail "no nettrace"
head -c 8 "$workdir/runtime.nettrace" | grep -q Nettrace || fail "format nettrace is no nettrace file"

# SIGTERM during a capture: the capture stops early and keeps what it
# collected, then the server exits.
before=$(ls "$workdir/captures")
curl -s -X POST -o /dev/null "$url/captures?pid=$app&seconds=600" &
client=$!
background_pids+=("$client")
until [[ $(ls "$workdir/captures") != "$before" ]]; do sleep 0.1; done
sleep 1
kill -TERM "$server"
status=0
wait "$server" || status=$?
cat "$workdir/serve.out"
((status == 0)) || fail "serve exited with $status on SIGTERM"
interrupted=$(comm -13 <(echo "$before") <(ls "$workdir/captures"))
grep -q 'stopped: interrupted' "$workdir/captures/$interrupted/profcpu.log" ||
	fail "the running capture was not stopped by the server's SIGTERM"
assert_share "$workdir/captures/$interrupted/folded_stacks.out" 'Demo\.Program::HotMethod' 70 100
