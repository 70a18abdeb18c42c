#!/usr/bin/env bash
# profcpu and the real perf understand each other: perf script reads our
# perf.data and sees our samples; profcpu postprocess reads a perf.data from
# perf record -g and finds the same stacks as profcpu's own capture.
source "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || skip "perf (linux-perf) is not installed"
perf record -q -o /dev/null -e cpu-clock true 2>/dev/null || skip "perf record cannot sample here"

start "$WORKLOAD_SPLIT" 60
pid=$started_pid
before=$(date +%s)
"$PROFCPU" collect -pid "$pid" -duration 3 -F 499 -o "$workdir/ours"
after=$(date +%s)
ours=$(folded total "$workdir/ours/folded_stacks.out")
perf script -i "$workdir/ours/perf.data" >"$workdir/perf.txt" 2>"$workdir/perf.err"
theirs=$(grep -cE '^ *workload_split +[0-9]+ +\[[0-9]+\] +[0-9.]+: +[0-9]+ cpu-clock' "$workdir/perf.txt" || true)
echo "profcpu: $ours samples; perf script on our perf.data: $theirs"
((ours > 100 && ours == theirs)) || fail "perf script sees $theirs samples, profcpu $ours"
if grep -v '^$' "$workdir/perf.err" | grep -v 'Warning:.*kernel' >/dev/null; then
	cat "$workdir/perf.err"
	fail "perf script complained about our perf.data"
fi
# Each sample dated by the wall clock (perf script's tod, from the clock
# moment our perf.data records): within the capture's seconds.
perf script -i "$workdir/ours/perf.data" -F tod >"$workdir/dates.txt" 2>/dev/null
first=$(head -1 "$workdir/dates.txt") last=$(tail -1 "$workdir/dates.txt")
echo "samples dated from $first to $last (the capture ran from $(date -d @"$before" +%T) to $(date -d @"$after" +%T))"
for when in "$first" "$last"; do
	seconds=$(date -d "$when" +%s) || fail "perf script gave no date: '$when'"
	((before <= seconds && seconds <= after)) ||
		fail "a sample dated $when, outside the capture's $before..$after"
done
grep -qP '^\t +[0-9a-f]+ spin_sixty\+0x[0-9a-f]+ \(.*/workload_split\)$' "$workdir/perf.txt" ||
	fail "perf script does not name spin_sixty from our mappings"

mkdir "$workdir/perf"
perf record -q -g -F 499 -p "$pid" -o "$workdir/perf/perf.data" -- sleep 3 2>/dev/null
"$PROFCPU" postprocess -dir "$workdir/perf"
folded top "$workdir/perf/folded_stacks.out" 6
# The same stacks carry the same shares in both captures: each path over
# both threads, which split their work alike however the machine's load
# shares the CPU between them.
assert_shares_agree "profcpu capture" "$workdir/ours/folded_stacks.out" \
	"perf record capture" "$workdir/perf/folded_stacks.out" 7 \
	'^workload_split;.*worker;path_a;spin_sixty$' '^workload_split;.*worker;path_b;spin_thirty$' \
	'^workload_split;.*worker;path_c;spin_ten$'
