#!/usr/bin/env bash
# Source lines of .NET code: a C# method with two loops on their own lines,
# the first doing twice the work (tests/dotnet/TwoLoops, Release, its
# portable PDB beside it). The lines come from the runtime's maps of each
# piece of JIT code to IL offsets (the rundown of the capture's EventPipe
# session) and the PDB's sequence points: go tool pprof -top -lines puts two
# thirds of the method's time on the first line and a third on the second,
# in every tier the method ran in (quick, on-stack-replaced, optimized).
# Without its PDB, or with a damaged one, the method keeps its name and the
# log says once why it has no lines.
source "$(dirname "$0")/lib.sh"

build_dotnet_app TwoLoops "$workdir/app"
source_file=$tests_dir/dotnet/TwoLoops/Program.cs
first=$(grep -n 'TWO THIRDS' "$source_file" | cut -d: -f1)
second=$(grep -n 'ONE THIRD' "$source_file" | cut -d: -f1)
dll=$workdir/app/twoloops.dll
out=$workdir/out

# The app waits for the go file until the session runs, so that its first
# tiers are sampled too.
start_dotnet_app "$dll" 60 "$workdir/go"
app_pid=$started_pid
"$PROFCPU" collect -pid "$app_pid" -duration 12 -F 499 --lines -o "$out" >"$workdir/collect.out" 2>"$workdir/collect.err" &
collect_pid=$!
background_pids+=("$collect_pid")
until grep -q 'EventPipe session' "$out/profcpu.log" 2>/dev/null; do
	kill -0 "$collect_pid" 2>/dev/null || { cat "$workdir/collect.err"; fail "collect exited before its event session started"; }
	sleep 0.1
done
touch "$workdir/go"
wait "$collect_pid" || { cat "$workdir/collect.err"; fail "collect failed"; }
kill "$app_pid"
grep -E 'pieces of JIT code of pid [0-9]+ mapped to IL offsets' "$out/profcpu.log" ||
	fail "the log does not say the rundown's IL maps were read"

# pprof_lines FILE: "LINE SAMPLES" for each line of TwoLoops in go tool
# pprof -top -lines ("flat flat% sum% cum cum% NAME FILE:LINE"), and
# "none SAMPLES" for its samples on no line.
pprof_lines() {
	go tool pprof -top -lines -sample_index=samples "$out/profile.pb.gz" >"$workdir/top.txt" 2>&1 ||
		{ cat "$workdir/top.txt"; fail "go tool pprof cannot read profile.pb.gz"; }
	grep -E 'Program::(TwoLoops|Main)' "$workdir/top.txt" >&2
	awk '$6 ~ /Program::TwoLoops$/ && $1 > 0 {
		line = $7 ~ /\/Program\.cs:[0-9]+$/ ? $7 : "none"; sub(/.*:/, "", line); count[line] += $1 }
		END { for (line in count) print line, count[line] }' "$workdir/top.txt"
}

echo "--- go tool pprof -top -lines"
pprof_lines >"$workdir/lines.txt"
on_line() { awk -v line="$1" '$1 == line { print $2 }' "$workdir/lines.txt"; }
first_samples=$(on_line "$first") second_samples=$(on_line "$second")
method_samples=$(awk '{ total += $2 } END { print total + 0 }' "$workdir/lines.txt")
[[ -n $first_samples && -n $second_samples ]] ||
	fail "pprof shows no samples of TwoLoops on Program.cs:$first and :$second"
on_lines=$((first_samples + second_samples))
((on_lines * 100 >= method_samples * 95)) ||
	fail "only $on_lines of TwoLoops' $method_samples samples are on its two lines"
about "pprof, line $first" "$(python3 -c "print(round(100 * $first_samples / $on_lines, 1))")" 66.7 "$on_lines"
about "pprof, line $second" "$(python3 -c "print(round(100 * $second_samples / $on_lines, 1))")" 33.3 "$on_lines"

echo "--- every tier of TwoLoops has its lines (perf_script.out with --lines)"
python3 - "$out/perf_script.out" <<'PY' || fail "a tier of TwoLoops has samples without lines"
import re, sys
samples = open(sys.argv[1]).read().split("\n\n")
tiers = {}
for sample in samples:
    lines = sample.strip("\n").split("\n")
    if len(lines) < 2:
        continue
    leaf = re.search(r"Demo\.Program::TwoLoops\(\)\[(\w+)\]", lines[1])
    if not leaf:
        continue
    counts = tiers.setdefault(leaf.group(1), [0, 0])
    counts[0] += 1
    counts[1] += len(lines) > 2 and re.fullmatch(r"  Program\.cs:\d+", lines[2]) is not None
for tier, (total, with_line) in sorted(tiers.items()):
    print(f"{tier}: {with_line} of {total} samples with a line")
sys.exit(0 if tiers and all(w >= 0.95 * t for t, w in tiers.values() if t >= 20) else 1)
PY

# postprocess_without WHY: the capture again, offline, with the PDB as the
# caller left it: TwoLoops keeps its name and its share, on no line, and the
# log says WHY once.
postprocess_without() {
	local before
	before=$(wc -l <"$out/profcpu.log")
	"$PROFCPU" postprocess -dir "$out" 2>"$workdir/postprocess.err" >/dev/null ||
		{ cat "$workdir/postprocess.err"; fail "postprocess failed"; }
	assert_share "$out/folded_stacks.out" 'Demo\.Program::TwoLoops' 80 100
	pprof_lines >"$workdir/lines.txt"
	cat "$workdir/lines.txt"
	[[ $(cut -d' ' -f1 "$workdir/lines.txt") == none ]] || fail "TwoLoops has lines without its PDB"
	tail -n +$((before + 1)) "$out/profcpu.log" >"$workdir/run.log"
	grep -F "no source lines for the .NET code of $dll" "$workdir/run.log" || true
	count=$(grep -cF "no source lines for the .NET code of $dll: $1" "$workdir/run.log" || true)
	[[ $count == 1 ]] || fail "the log says $count times (not once) that $dll has no lines: $1"
}

echo "--- without the PDB"
mv "$workdir/app/twoloops.pdb" "$workdir/twoloops.pdb"
postprocess_without "no PDB embedded and none beside it"

echo "--- with a damaged PDB"
head -c 1000 "$workdir/twoloops.pdb" >"$workdir/app/twoloops.pdb"
postprocess_without "it is not a portable PDB, or it is damaged"
echo "ok: $on_lines samples on TwoLoops' lines"
