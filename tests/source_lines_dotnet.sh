#!/usr/bin/env bash
# Source lines of .NET code: a C# method with two loops on their own lines,
# the first doing twice the work (tests/dotnet/TwoLoops, Release, its
# portable PDB beside it). The lines come from the runtime's maps of each
# piece of JIT code to IL offsets (the rundown of the capture's EventPipe
# session) and the PDB's sequence points: go tool pprof -top -lines puts two
# thirds of the method's time on the first line and a third on the second,
# in every tier the method ran in (quick, on-stack-replaced, optimized).
# hot_lines.txt and profcpu lines list the method once, by the name the
# folded stacks give it, its tiers together. Without its PDB, or with a
# damaged one, the method keeps its name and the log says once why it has
# no lines.
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

echo "--- go tool pprof -top -lines"
twoloops_pprof_lines "$out" >"$workdir/lines.txt"
assert_twoloops_split "$workdir/lines.txt"

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

echo "--- hot_lines.txt and profcpu lines: TwoLoops once, by its folded name"
cat "$out/hot_lines.txt"
assert_hot_function "$out/hot_lines.txt" twoloops
"$PROFCPU" lines -dir "$out" --top 3 >"$workdir/lines-command.txt" || fail "profcpu lines failed"
cat "$workdir/lines-command.txt"
assert_hot_function "$workdir/lines-command.txt" twoloops

# postprocess_without WHY: the capture again, offline, with the PDB as the
# caller left it: TwoLoops keeps its name and its share, on no line, and the
# log says WHY once.
postprocess_without() {
	local before
	before=$(wc -l <"$out/profcpu.log")
	"$PROFCPU" postprocess -dir "$out" 2>"$workdir/postprocess.err" >/dev/null ||
		{ cat "$workdir/postprocess.err"; fail "postprocess failed"; }
	assert_share "$out/folded_stacks.out" 'Demo\.Program::TwoLoops' 80 100
	twoloops_pprof_lines "$out" >"$workdir/lines.txt"
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
