#!/usr/bin/env bash
# A ring buffer of one page at a high rate: records wrap around its end all
# the time and some are lost. The capture stays whole (the real perf reads
# every sample), the losses are reported, and the stacks are right.
source "$(dirname "$0")/lib.sh"

start "$WORKLOAD_SPLIT" 30
"$PROFCPU" collect -pid "$started_pid" -duration 2 -F 4999 -buffersize 1 -o "$workdir/out" \
	2>"$workdir/stderr"
cat "$workdir/stderr"
grep -qE 'samples were lost' "$workdir/stderr" || fail "no word of lost samples"
grep -qE '^lost samples: [1-9]' "$workdir/out/profcpu.log" || fail "the log does not count lost samples"
ours=$(folded total "$workdir/out/folded_stacks.out")
perf script -i "$workdir/out/perf.data" >"$workdir/perf.txt" 2>"$workdir/perf.err" ||
	fail "perf script cannot read the capture: $(cat "$workdir/perf.err")"
theirs=$(grep -cE ' cpu-clock: *$' "$workdir/perf.txt" || true)
echo "profcpu: $ours samples; perf script: $theirs"
# Not a count bound: a loaded machine gives the workload less CPU time.
((ours > 0 && ours == theirs)) || fail "perf script sees $theirs samples, profcpu $ours"
assert_share "$workdir/out/folded_stacks.out" 'worker;path_a;spin_sixty$' 40 80
