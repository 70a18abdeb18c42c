#!/usr/bin/env bash
# The source line of a quick-JIT frame below its own on-stack-replaced code:
# TwoLoops (tests/dotnet/TwoLoops) run without call counting
# (DOTNET_TC_CallCounting=0) stays quick-JIT code, and each call, after a
# thousand turns of its first loop, enters its on-stack replacement at that
# loop's head, where the quick-JIT frame waits below it for the rest of the
# call. That frame's call (the runtime's transition to the replacement) is
# mapped to no IL offset: the frame gets the line of the code it returns to,
# the first loop's head, in perf_script.out and the folded stacks of --lines,
# while the replacement's own frames keep both loops' lines. (Main, which
# loops too, is replaced alike.)
source "$(dirname "$0")/lib.sh"

build_dotnet_app TwoLoops "$workdir/app"
source_file=$tests_dir/dotnet/TwoLoops/Program.cs
first=$(grep -n 'TWO THIRDS' "$source_file" | cut -d: -f1)
second=$(grep -n 'ONE THIRD' "$source_file" | cut -d: -f1)
out=$workdir/out

DOTNET_TC_CallCounting=0 start_dotnet_app "$workdir/app/twoloops.dll" 60
"$PROFCPU" collect -pid "$started_pid" -duration 6 -F 499 --lines -o "$out" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"

echo "--- perf_script.out: the quick-JIT frames below the replacement"
python3 - "$out/perf_script.out" "$first" "$second" <<'PY' || fail "quick-JIT frames below the on-stack replacement lack their line"
import re, sys
path, first, second = sys.argv[1], sys.argv[2], sys.argv[3]
frame = re.compile(r"Demo\.Program::TwoLoops\(\)\[(\w+)\]")
total = below = with_line = 0
replacement_lines = set()
for sample in open(path).read().split("\n\n"):
    lines = sample.strip("\n").split("\n")[1:]
    tiers = [(i, m.group(1)) for i, line in enumerate(lines) if (m := frame.search(line))]
    if not tiers:
        continue
    total += 1
    if len(tiers) < 2 or tiers[0][1] != "OptimizedTier1OSR" or tiers[1][1] != "QuickJitted":
        continue
    below += 1
    def line_of(index):
        return lines[index + 1].strip() if index + 1 < len(lines) and lines[index + 1].startswith("  ") else None
    replacement_lines.add(line_of(tiers[0][0]))
    with_line += line_of(tiers[1][0]) == f"Program.cs:{first}"
print(f"{below} of {total} samples of TwoLoops in its replacement over its quick-JIT frame; "
      f"{with_line} of those at Program.cs:{first}; the replacement's lines: {sorted(map(str, replacement_lines))}")
sys.exit(0 if below >= total // 2 and with_line >= below * 0.95
         and {f"Program.cs:{first}", f"Program.cs:{second}"} <= replacement_lines else 1)
PY

echo "--- folded stacks of --lines"
# A frame repeated with its line is one frame: the second loop's samples
# show both lines, and no TwoLoops frame is left without one.
assert_share "$out/folded_stacks.out" \
	"Demo\.Program::TwoLoops Program\.cs:$first;twoloops!Demo\.Program::TwoLoops Program\.cs:$second\$" 20 100
assert_share "$out/folded_stacks.out" 'Demo\.Program::TwoLoops;' 0 5
echo "ok"
