#!/usr/bin/env bash
# Threads born after collection began are sampled, under their own name.
source "$(dirname "$0")/lib.sh"

go=$workdir/go
start "$WORKLOAD_LATE_THREADS" "$go"
workload=$started_pid
"$PROFCPU" collect -pid "$workload" -duration 3 -F 499 -o "$workdir/out" 2>"$workdir/stderr" &
profcpu=$!
background_pids+=("$profcpu")
# Let sampling start, then let the workload start its threads.
until grep -q 'sampling pid' "$workdir/stderr"; do sleep 0.05; done
sleep 0.3
touch "$go"
wait "$profcpu" || fail "profcpu collect failed: $(cat "$workdir/stderr")"

folded top "$workdir/out/folded_stacks.out" 3
assert_share "$workdir/out/folded_stacks.out" 'late_worker;late_worker_spin$' 90 100
samples=$(folded total "$workdir/out/folded_stacks.out")
((samples >= 150)) || fail "only $samples samples of two busy late threads at 499 Hz"
threads=$(grep -cE '^ *late-worker +[0-9]+/' "$workdir/out/perf_script.out" || true)
# All but the few samples taken before a thread renamed itself.
((threads * 100 >= samples * 95)) || fail "only $threads of $samples samples carry the late-worker thread name"
tids=$(grep -oE '^ *late-worker +[0-9]+/[0-9]+' "$workdir/out/perf_script.out" | sort -u | wc -l)
((tids == 2)) || fail "expected samples from 2 late threads, got $tids"
