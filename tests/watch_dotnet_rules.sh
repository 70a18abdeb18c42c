#!/usr/bin/env bash
# The .NET rules of the flight recorder, against the app's own count. The
# app (tests/dotnet/EventStacks) idles until the test creates its trigger
# file, then throws 3 exceptions a round, some twenty rounds a second (2:1
# from ThrowA and ThrowB), and prints how many it caught.
#   1. Calm: a watch with --exceptions 20 hears no rule; stopped, it says
#      so and wrote no capture.
#   2. The burst: `watch --exceptions 20 --before 5 --after 10 --once`
#      logs the exceptions rule with the rate it saw, writes one capture
#      whose runtime events hold every exception the app caught (the
#      burst lies within the window), 2:1 from ThrowA and ThrowB, beside
#      the CPU samples of the same seconds.
#   3. SIGTERM during a capture's --after seconds, once the burst is
#      over: the capture, cut short, still holds every exception, those
#      of the last second before the signal included.
#   4. A GC pause: another app (tests/dotnet/EventMix) idles, then
#      allocates until it has collected (its own GC counts say how many);
#      `watch --gc-pause 0.05` fires on it, naming the pause it saw, and
#      its capture's flame graph gives the window's GCs.
#   5. A process that runs no .NET, and a .NET one started with
#      DOTNET_EnableDiagnostics=0 (no diagnostics socket): the rule is
#      refused in one line each.
source "$(dirname "$0")/lib.sh"

build_dotnet_app EventStacks
build_dotnet_app EventMix
start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go" 60 spin
app=$started_pid app_output=$started_output

# wait_session DIR: until the watch writing into DIR records the app's events.
wait_session() {
	until grep -q "EventPipe session .*/runtime-$app-" "$1/watch-runtime.log" 2>/dev/null; do
		kill -0 "$watch" 2>/dev/null || { cat "$workdir/$2.err"; fail "$2: the watch stopped"; }
		sleep 0.2
	done
}

# 1. Calm: three periods' events read, no rule fires.
"$PROFCPU" watch -pid "$app" --exceptions 20 --before 5 --after 10 --once \
	-o "$workdir/calm" 2>"$workdir/calm.err" &
watch=$!
wait_session "$workdir/calm" calm
sleep 4
kill -TERM "$watch"
status=0
wait "$watch" || status=$?
cat "$workdir/calm.err"
((status == 1)) || fail "a --once watch that captured nothing exited with $status, not 1"
grep -q 'no rule fired: nothing was captured' "$workdir/calm.err" || fail "the calm watch did not say nothing fired"
[[ -z $(find "$workdir/calm" -mindepth 1 -maxdepth 1 -type d) ]] || fail "the calm watch left folders: $(ls -A "$workdir/calm")"

# 2. The burst, started once the watch records the app's events.
"$PROFCPU" watch -pid "$app" --exceptions 20 --before 5 --after 10 --once \
	-o "$workdir/out" >"$workdir/out.log" 2>"$workdir/out.err" &
watch=$!
wait_session "$workdir/out" out
sleep 2
touch "$workdir/go"
status=0
wait "$watch" || status=$?
cat "$workdir/out.err"
((status == 0)) || fail "watch exited with $status"
until grep -q '^done' "$app_output"; do sleep 0.2; done
caught=$(awk '$1 == "exceptions" {print $2}' "$app_output")
echo "the app caught $caught exceptions"
grep -E 'rule exceptions fired: [0-9]+ exceptions thrown a second \([0-9]+ in [0-9.]+ s; --exceptions 20\)' \
	"$workdir/out.err" || fail "no line says the exceptions rule fired, with its rate"
captures=("$workdir"/out/*_exceptions)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
capture=${captures[0]}
grep -q '^rule: exceptions: ' "$capture/profcpu.log" || fail "the capture's log does not name the rule"
assert_file "$capture/runtime-1.nettrace"
exceptions=$capture/exceptions_folded_stacks.out
assert_file "$exceptions"
counted=$(folded count "$exceptions" 'Demo\.KnownException$')
((counted == caught)) || fail "the capture counts $counted exceptions, the app caught $caught"
a=$(folded count "$exceptions" 'Demo\.Program::ThrowA;.*Demo\.KnownException$')
b=$(folded count "$exceptions" 'Demo\.Program::ThrowB;.*Demo\.KnownException$')
echo "ThrowA $a, ThrowB $b"
((a == 2 * b && b > 0)) || fail "ThrowA threw $a, ThrowB $b: not 2:1"
# The CPU samples of the same seconds: the app's spinning thread, from the
# trigger file on.
(($(folded count "$capture/folded_stacks.out" 'Demo\.Program::Spin') > 0)) ||
	fail "the capture's CPU samples hold no Demo.Program::Spin"

# 3. SIGTERM once the burst is over, long before the --after seconds are.
start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go-term" 60 spin
app=$started_pid app_output=$started_output
"$PROFCPU" watch -pid "$app" --exceptions 20 --before 5 --after 600 --once \
	-o "$workdir/term" >"$workdir/term.log" 2>"$workdir/term.err" &
watch=$!
wait_session "$workdir/term" term
touch "$workdir/go-term"
until grep -q '^done' "$app_output"; do sleep 0.2; done
until grep -q 'rule exceptions fired' "$workdir/term.err"; do sleep 0.2; done
kill -TERM "$watch"
status=0
wait "$watch" || status=$?
cat "$workdir/term.err"
((status == 0)) || fail "watch exited with $status after SIGTERM"
caught=$(awk '$1 == "exceptions" {print $2}' "$app_output")
captures=("$workdir"/term/*_exceptions)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
grep -q 'cut short by SIGTERM' "${captures[0]}/profcpu.log" || fail "the capture's log does not say it was cut short"
counted=$(folded count "${captures[0]}/exceptions_folded_stacks.out" 'Demo\.KnownException$')
((counted == caught)) || fail "the capture cut short counts $counted exceptions, the app caught $caught"
kill "$app"

# 4. GC pauses.
start_dotnet_app "$workdir/EventMix/eventmix.dll" "$workdir/go-gc" 10
app=$started_pid app_output=$started_output
"$PROFCPU" watch -pid "$app" --gc-pause 0.05 --before 3 --after 2 --once \
	-o "$workdir/gc" >"$workdir/gc.log" 2>"$workdir/gc.err" &
watch=$!
wait_session "$workdir/gc" gc
touch "$workdir/go-gc"
status=0
wait "$watch" || status=$?
cat "$workdir/gc.err"
((status == 0)) || fail "watch --gc-pause exited with $status"
until grep -q '^done' "$app_output"; do sleep 0.2; done
gcs=$(awk '$1 == "gc0" {print $2}' "$app_output")
echo "the app collected $gcs times"
((gcs > 0)) || fail "the app made no GC"
pause=$(sed -nE 's/.*rule gc-pause fired: a GC paused the runtime ([0-9.]+) ms \(--gc-pause 0.05\).*/\1/p' "$workdir/gc.err")
[[ -n $pause ]] || fail "no line says the gc-pause rule fired, with the pause"
python3 -c "import sys; sys.exit(0 if $pause >= 0.05 else 1)" || fail "the rule fired on a pause of $pause ms"
captures=("$workdir"/gc/*_gc-pause)
((${#captures[@]} == 1)) || fail "expected one gc-pause capture, found: ${captures[*]}"
grep -qE 'GC: [1-9][0-9]* collections' "${captures[0]}/flamegraph.svg" ||
	fail "the capture's flame graph gives no GC of its window"

# 5. Not .NET, and .NET without its diagnostics socket.
start "$WORKLOAD_TWO_LOOPS"
status=0
"$PROFCPU" watch -pid "$started_pid" --exceptions 20 -o "$workdir/native" 2>"$workdir/native.err" || status=$?
cat "$workdir/native.err"
((status != 0)) || fail "--exceptions on a native process was not refused"
grep -q "^profcpu: --exceptions needs a .NET process: pid $started_pid" "$workdir/native.err" ||
	fail "the refusal does not say why"
env DOTNET_EnableDiagnostics=0 dotnet "$workdir/EventMix/eventmix.dll" "$workdir/never" 1 >"$workdir/nodiag.out" 2>&1 &
nodiag=$!
background_pids+=("$nodiag")
until grep -q ready "$workdir/nodiag.out"; do sleep 0.1; done
status=0
"$PROFCPU" watch -pid "$nodiag" --contention 100 -o "$workdir/nodiag" 2>"$workdir/nodiag.err" || status=$?
cat "$workdir/nodiag.err"
((status != 0)) || fail "--contention on a .NET process without its diagnostics socket was not refused"
grep -q "^profcpu: --contention needs the runtime's events, and pid $nodiag has no diagnostics socket" \
	"$workdir/nodiag.err" || fail "the refusal does not say why"
