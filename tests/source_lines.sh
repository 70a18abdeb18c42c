#!/usr/bin/env bash
# Source lines of native code: a C function with two loops on their own
# lines, the first doing twice the work. go tool pprof -top -lines on our
# profile.pb.gz puts two thirds on the first line and a third on the
# second, as the real perf's srcline does on the same program; --lines
# gives folded stacks and perf script text by line; profcpu lines lists
# them with their source.
source "$(dirname "$0")/lib.sh"

source_file=$tests_dir/workloads/two_loops.c
first=$(grep -n 'TWO THIRDS' "$source_file" | cut -d: -f1)
second=$(grep -n 'ONE THIRD' "$source_file" | cut -d: -f1)

start "$WORKLOAD_TWO_LOOPS" 3
"$PROFCPU" collect -pid "$started_pid" -duration 30 -F 499 --lines -o "$workdir/out" >/dev/null
wait "$started_pid" || true
out=$workdir/out
samples=$(folded total "$out/folded_stacks.out")

echo "--- go tool pprof -top -lines"
go tool pprof -top -lines -sample_index=samples "$out/profile.pb.gz" >"$workdir/top.txt" 2>&1 ||
	{ cat "$workdir/top.txt"; fail "go tool pprof cannot read profile.pb.gz"; }
sed -n '1,12p' "$workdir/top.txt"
# "  flat  flat%  sum%  cum  cum%  two_loops /path/two_loops.c:16"
pprof_share() {
	awk -v line="two_loops.c:$1" '$6 == "two_loops" && $7 ~ ("/" line "$") { sub("%", "", $2); print $2 }' \
		"$workdir/top.txt"
}
[[ -n $(pprof_share "$first") ]] || fail "pprof shows no line two_loops.c:$first"
about "pprof, line $first" "$(pprof_share "$first")" 66.7 "$samples"
about "pprof, line $second" "$(pprof_share "$second")" 33.3 "$samples"

echo "--- the real perf on the same program: perf report --sort srcline"
perf record -q -F 499 -o "$workdir/perf.data" -- "$WORKLOAD_TWO_LOOPS" 3 >/dev/null 2>&1 ||
	skip "perf record cannot sample here"
# -n: "OVERHEAD% SAMPLES SRCLINE" rows.
perf report -i "$workdir/perf.data" --stdio -n --sort srcline 2>/dev/null >"$workdir/srcline.txt"
perf_share() { awk -v line="two_loops.c:$1" '$3 == line { sub("%", "", $1); print $1 }' "$workdir/srcline.txt"; }
perf_samples=$(awk '$1 ~ /%$/ { total += $2 } END { print total + 0 }' "$workdir/srcline.txt")
grep -E 'two_loops.c:' "$workdir/srcline.txt"
[[ -n $(perf_share "$first") ]] || fail "perf report shows no line two_loops.c:$first"
about "perf, line $first" "$(perf_share "$first")" 66.7 "$perf_samples"
about "perf, line $second" "$(perf_share "$second")" 33.3 "$perf_samples"

echo "--- --lines: folded stacks, perf script text"
assert_share_about "$out/folded_stacks.out" ";two_loops two_loops.c:$first\$" 66.7
assert_share_about "$out/folded_stacks.out" ";main two_loops.c:[0-9]+;two_loops two_loops.c:$second\$" 33.3
awk -v srcline="  two_loops.c:$first" '$0 == srcline && previous ~ /^\t +[0-9a-f]+ two_loops \(/ { found = 1 }
	{ previous = $0 } END { exit !found }' "$out/perf_script.out" ||
	fail "perf_script.out has no srcline two_loops.c:$first under a two_loops frame"
grep -q "two_loops two_loops.c:$first (" "$out/flamegraph.svg" ||
	fail "the flame graph has no frame 'two_loops two_loops.c:$first'"

echo "--- speedscope frames"
python3 - "$out/speedscope.json" "$first" <<'PY' || fail "speedscope.json: no two_loops frame with its file and line"
import json, sys
frames = json.load(open(sys.argv[1]))["shared"]["frames"]
frame = next(f for f in frames if f["name"] == "two_loops")
print(frame)
sys.exit(0 if frame["file"].endswith("two_loops.c") and frame["line"] <= int(sys.argv[2]) else 1)
PY

echo "--- by function (postprocess without --lines): lines in the flame graph's tooltip"
"$PROFCPU" postprocess -dir "$out" >/dev/null
grep -qE ";two_loops [0-9]+$" "$out/folded_stacks.out" || fail "without --lines a frame is a function"
grep -q "two_loops at two_loops.c:$first" "$out/flamegraph.svg" ||
	fail "the flame graph's tooltip of two_loops lacks two_loops.c:$first"
! grep -qE '^  two_loops.c:' "$out/perf_script.out" || fail "srcline lines without --lines"

echo "--- profcpu lines"
"$PROFCPU" lines -dir "$out" --top 3 >"$workdir/lines.txt"
cat "$workdir/lines.txt"
grep -qE "^ +[0-9.]+ \| +$first \| .*TWO THIRDS" "$workdir/lines.txt" ||
	fail "profcpu lines does not show line $first with its share and source"
lines_share=$(awk -v line="$first" -F'|' '$2 + 0 == line && $1 ~ /[0-9]/ { print $1 + 0 }' "$workdir/lines.txt")
about "profcpu lines, line $first" "$lines_share" 66.7 "$samples"
# The source elsewhere (a tree checked out in another place): found under
# --source by the tail of its path.
mkdir -p "$workdir/elsewhere/workloads"
sed 's/TWO THIRDS/MOVED/' "$source_file" >"$workdir/elsewhere/workloads/two_loops.c"
"$PROFCPU" lines -dir "$out" --source "$workdir/elsewhere" >"$workdir/moved.txt"
grep -qE "^ +[0-9.]+ \| +$first \| .*MOVED" "$workdir/moved.txt" ||
	fail "profcpu lines --source does not read the source under that folder"
echo "ok: $samples samples"
