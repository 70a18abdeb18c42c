#!/usr/bin/env bash
# The flight recorder's --threadpool-queue rule, against the app's own
# count. The app (tests/dotnet/PoolFlood) idles, its thread pool's queue
# empty, until the test creates its trigger file, then queues 5000 work
# items that each block 5 ms and prints the pool's pending items right
# after ("queued N").
#   1. Calm, then the flood: `watch --threadpool-queue 1000 --once` hears
#      nothing over three seconds of the runtime's counters before the
#      trigger, then fires once with a queue of at least 1000 and at most
#      what the app queued, and writes one capture named by the rule.
#   2. A process that runs no .NET: the rule is refused in one line.
source "$(dirname "$0")/lib.sh"

build_dotnet_app PoolFlood
start_dotnet_app "$workdir/PoolFlood/poolflood.dll" "$workdir/go" 5000
app=$started_pid app_output=$started_output

# 1. Calm, then the flood, once the watch records the app's events.
"$PROFCPU" watch -pid "$app" --threadpool-queue 1000 --before 3 --after 2 --once \
	-o "$workdir/out" >"$workdir/out.log" 2>"$workdir/out.err" &
watch=$!
until grep -q "EventPipe session .*/runtime-$app-" "$workdir/out/watch-runtime.log" 2>/dev/null; do
	kill -0 "$watch" 2>/dev/null || { cat "$workdir/out.err"; fail "the watch stopped"; }
	sleep 0.2
done
sleep 3
grep -q 'fired' "$workdir/out.err" && { cat "$workdir/out.err"; fail "a rule fired before the flood"; }
touch "$workdir/go"
# Once the flood has run (the app says "done"), five more seconds for the
# counters' last values, which the rule hears a second or two late: a
# watch that has not fired by then heard nothing (one that has ends once
# its capture is written).
until grep -q '^done' "$app_output"; do sleep 0.2; done
for ((i = 0; i < 25; i++)); do
	kill -0 "$watch" 2>/dev/null || break
	sleep 0.2
done
if kill -0 "$watch" 2>/dev/null && ! grep -q 'fired' "$workdir/out.err"; then
	kill -TERM "$watch"
	wait "$watch" || true
	cat "$workdir/out.err"
	fail "no rule fired during the flood"
fi
status=0
wait "$watch" || status=$?
cat "$workdir/out.err"
((status == 0)) || fail "watch exited with $status"
queued=$(awk '$1 == "queued" {print $2}' "$app_output")
line=$(grep -E "rule threadpool-queue fired: the thread pool's queue held [0-9]+ work items \(--threadpool-queue 1000\)" \
	"$workdir/out.err") || fail "no line says the threadpool-queue rule fired, with the queue it saw"
held=$(sed -E 's/.*queue held ([0-9]+) work items.*/\1/' <<<"$line")
echo "the app queued $queued (pending right after), the counter read $held"
((held >= 1000 && held <= queued)) || fail "the rule saw $held work items: not within 1000 and the $queued queued"
(($(grep -c 'fired' "$workdir/out.err") == 1)) || fail "more than one rule fired"
captures=("$workdir"/out/*_threadpool-queue)
((${#captures[@]} == 1)) && [[ -d ${captures[0]} ]] || fail "expected one capture, found: $(ls "$workdir/out")"
grep -q '^rule: threadpool-queue: ' "${captures[0]}/profcpu.log" || fail "the capture's log does not name the rule"
assert_file "${captures[0]}/runtime-1.nettrace"
kill "$app"

# 2. No .NET: refused in one line.
status=0
"$PROFCPU" watch -pid $$ --threadpool-queue 10 -o "$workdir/none" 2>"$workdir/none.err" || status=$?
cat "$workdir/none.err"
((status != 0)) || fail "--threadpool-queue on a process without .NET was accepted"
grep -q -- '--threadpool-queue needs a .NET process' "$workdir/none.err" || fail "the refusal does not name the rule"
(($(wc -l <"$workdir/none.err") == 1)) || fail "the refusal took more than one line"
