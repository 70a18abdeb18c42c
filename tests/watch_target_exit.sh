#!/usr/bin/env bash
# The target's exit: before any rule fired, the watch ends saying nothing
# was captured (with --once, exit status 1) and leaves no ring; during a
# capture's --after seconds, the capture is written from what was sampled
# and says it was cut short.
source "$(dirname "$0")/lib.sh"

# Before: nothing fired.
start "$WORKLOAD_TWO_LOOPS" 3
status=0
timeout 120 "$PROFCPU" watch -pid "$started_pid" --cpu 10000 --once -o "$workdir/before" \
	2>"$workdir/stderr" || status=$?
cat "$workdir/stderr"
((status == 1)) || fail "watch --once exited with $status when the target exited before a trigger"
grep -q 'stopped: the target exited' "$workdir/stderr" || fail "no word of the target's exit"
grep -q 'no rule fired: nothing was captured' "$workdir/stderr" || fail "no word that nothing was captured"
[[ -z $(find "$workdir/before" -mindepth 1 -maxdepth 1 -type d) ]] || fail "a folder was left in $workdir/before"

# During: the target exits 30 s before the capture's --after seconds end.
start "$WORKLOAD_TWO_LOOPS"
target=$started_pid
"$PROFCPU" watch -pid "$target" --before 5 --after 60 --once -o "$workdir/during" \
	2>"$workdir/stderr" &
watch=$!
until grep -q 'sampling pid' "$workdir/stderr"; do sleep 0.1; done
until (($(cpu_ticks "$target") > 200)); do sleep 0.5; done
kill -USR1 "$watch"
until grep -q 'rule manual fired' "$workdir/stderr"; do sleep 0.1; done
until (($(cpu_ticks "$target") > 300)); do sleep 0.5; done
kill "$target"
status=0
wait "$watch" || status=$?
cat "$workdir/stderr"
((status == 0)) || fail "watch exited with $status"
grep -q 'capture .*: [0-9]* samples, cut short by the end of sampling' "$workdir/stderr" ||
	fail "no word that the capture was cut short"
captures=("$workdir"/during/*_manual)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
grep -q 'cut short by the end of sampling' "${captures[0]}/profcpu.log" || fail "the log does not say it was cut short"
assert_share "${captures[0]}/folded_stacks.out" 'two_loops' 90 100
