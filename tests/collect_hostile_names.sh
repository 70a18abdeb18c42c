#!/usr/bin/env bash
# A target whose name and file path hold an escape sequence and a newline:
# nothing of it reaches the user's terminal, and the text outputs keep their
# layout (every sample still parses as PerfView parses perf.data.txt).
source "$(dirname "$0")/lib.sh"

hostile="$workdir/$(printf 'x\033[2J\ny')"
cp "$WORKLOAD_SPLIT" "$hostile"
start "$hostile" 30
"$PROFCPU" collect -pid "$started_pid" -duration 1 -F 499 -o "$workdir/out" >"$workdir/stdout" 2>"$workdir/stderr"
"$PROFCPU" view "$workdir/out/prof.trace.zip" >"$workdir/view"
for file in stdout stderr view out/perf_script.out out/folded_stacks.out; do
	if grep -q $'\033' "$workdir/$file"; then
		fail "an escape character reached $file"
	fi
done
grep -q 'x?\[2J' "$workdir/stderr" || fail "the target's name is not shown, made printable"
folded_samples=$(folded total "$workdir/out/folded_stacks.out")
trace_samples=$(reader summary "$workdir/out/prof.trace.zip" | awk '$1 == "samples" {print $2}')
echo "folded: $folded_samples samples; perf.data.txt by PerfView's rules: $trace_samples"
((folded_samples > 100 && folded_samples == trace_samples)) ||
	fail "perf.data.txt parses into $trace_samples samples, not $folded_samples"
