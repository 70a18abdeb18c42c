#!/usr/bin/env bash
# Readable names on a real ASP.NET Core service under load on loopback
# (tests/dotnet/WebMix): folded stacks start with thread names and read
# Assembly!Namespace.Type::Method (speedscope.json's frames too), with no
# tier, signature or endless names, while perf_script.out and the flame
# graph's tooltips keep the runtime's full names; --keep-tiers and --group-by change that. Then the same
# service with no perf map (DOTNET_EnableDiagnostics=0): its JIT code runs
# from /memfd:doublemapper (deleted) mappings, and profcpu view, our reader
# of PerfView's rules and TraceEvent itself (when it can be restored) read
# one module for it, not "deleted)".
source "$(dirname "$0")/lib.sh"

build_dotnet_app WebMix
app=$workdir/WebMix/webmix.dll

# profile ENV... : loads WebMix for 30 s with ENV and samples it for 6 s
# (with collect's $collect_options) into $workdir/$capture; the thread names
# it had are in $workdir/$capture.comms.
capture=0 collect_options=()
profile() {
	local port
	capture=$((capture + 1))
	port=$(free_port)
	export "$@"
	start_dotnet_app "$app" "http://127.0.0.1:$port" 30 json,regex,linq,sha256,async
	for variable in "$@"; do unset "${variable%%=*}"; done
	pid=$started_pid
	sleep 2 # past start-up, tier-up under way
	cat /proc/"$pid"/task/*/comm | sort -u >"$workdir/$capture.comms"
	"$PROFCPU" collect -pid "$pid" -duration 6 -F 199 "${collect_options[@]}" -o "$workdir/$capture" \
		>"$workdir/$capture.log" 2>&1 ||
		{ cat "$workdir/$capture.log"; fail "collect failed"; }
	kill "$pid" 2>/dev/null || true
	out=$workdir/$capture
}

# --- With the perf map: readable names.
profile DOTNET_PerfMapEnabled=1
folded=$out/folded_stacks.out
assert_file "$folded"

# Every stack starts with a thread name of the process; most with the
# thread pool's workers, whose work the load is.
python3 - "$folded" "$workdir/$capture.comms" <<'PY' || fail "stacks do not start with thread names"
import sys
comms = set(open(sys.argv[2]).read().splitlines())
roots = {}
for line in open(sys.argv[1]):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    root = stack.split(";")[0]
    roots[root] = roots.get(root, 0) + int(count)
print("roots:", roots)
strangers = [root for root in roots if root not in comms]
sys.exit(1 if strangers else 0)
PY
assert_share "$folded" '^\.NET TP Worker;' 40 100

# Frames read Assembly!Namespace.Type::Method.
assert_share "$folded" '(^|;)System\.Private\.CoreLib!System\.[A-Za-z0-9_.`+<>,\[\]]+::[^;(]+(;|$)' 3 100
assert_share "$folded" '(^|;)webmix!Program[^;(]*::[^;(]+(;|$)' 1 100
# No return type, signature, tier, MT comment; no endless names; no tower of
# one unnamed module.
longest=$(tr ';' '\n' <"$folded" | sed 's/ [0-9]*$//' | awk '{ if (length($0) > max) max = length($0) } END { print max }')
echo "longest frame: $longest characters"
((longest <= 300)) || fail "a folded frame is $longest characters long"
! grep -qE '\[(QuickJitted|OptimizedTier1|Optimized|InstrumentedTier|InstrumentedTierOptimized|Tier0|Tier1|OptimizedTier1OSR|QuickJittedOSR|PreJIT)\]' "$folded" ||
	fail "a tier in the folded stacks: $(grep -oE '[^;]*\[(QuickJitted|OptimizedTier1|Optimized|InstrumentedTier[A-Za-z]*)\]' "$folded" | head -1)"
! grep -qE '(^|;)(instance |void |class |valuetype )|/\* MT:|![^;]*::[^;]*\(' "$folded" ||
	fail "a return type, MT comment or signature in the folded stacks"
! grep -qE '(^|;)(\[[^];]+\]);\2(;| )' "$folded" || fail "a tower of one unnamed module: $(grep -oE '(^|;)(\[[^];]+\]);\2(;| )' "$folded" | head -1)"

# The full names stay in perf_script.out and in the flame graph's tooltips.
grep -qE ' [a-z0-9]+ \[System\.Private\.CoreLib\] System\.[^ ]+::[^ ]+\(.*\)\[[A-Za-z0-9]+\] \(/tmp/perf-[0-9]+\.map\)$' "$out/perf_script.out" ||
	fail "perf_script.out lost the runtime's full names"
python3 - "$out/flamegraph.svg" <<'PY' || fail "no tooltip holds a full runtime name"
import re, sys
svg = open(sys.argv[1]).read()
sys.exit(0 if re.search(r"<title>System\.Private\.CoreLib![^<\n]* \([0-9,]+ samples, [0-9.]+%\)\n"
                        r"[^<]*\[System\.Private\.CoreLib\] [^<]*\)\[[A-Za-z0-9]+\]", svg) else 1)
PY
# speedscope.json names frames as the folded stacks do.
python3 - "$out/speedscope.json" <<'PY' || fail "speedscope.json does not name .NET frames readably"
import json, re, sys
names = [frame["name"] for frame in json.load(open(sys.argv[1]))["shared"]["frames"]]
readable = [n for n in names if re.match(r"System\.Private\.CoreLib!System\.[^ (]+::[^ (]+$", n)]
full = [n for n in names if re.search(r"\[[A-Za-z0-9_.]+\] [^ ]+::[^ ]+\(.*\)\[[A-Za-z0-9]+\]$", n)]
print(f"speedscope frames: {len(names)}, {len(readable)} readable CoreLib methods, {len(full)} full runtime names",
      full[:1])
sys.exit(0 if readable and not full else 1)
PY
# The options: tiers kept apart, stacks by thread id, by process, by pid.
"$PROFCPU" postprocess -dir "$out" --keep-tiers >/dev/null
assert_share "$out/folded_stacks.out" '!System\.[^;]+::[^;]+ \[(QuickJitted|OptimizedTier1|Optimized|InstrumentedTier[A-Za-z]*|Tier0|Tier1)\]' 3 100
"$PROFCPU" postprocess -dir "$out" --group-by tid >/dev/null
assert_share "$out/folded_stacks.out" "^\.NET TP Worker-$pid/[0-9]+;" 40 100
"$PROFCPU" postprocess -dir "$out" --group-by process >/dev/null
assert_share "$out/folded_stacks.out" '^dotnet;' 100 100
"$PROFCPU" postprocess -dir "$out" --group-by pid >/dev/null
assert_share "$out/folded_stacks.out" "^dotnet-$pid;" 100 100
"$PROFCPU" postprocess -dir "$out" --group-by fibre 2>"$workdir/bad.err" && fail "--group-by fibre was accepted"
grep -q 'invalid --group-by fibre: give thread, tid, process or pid' "$workdir/bad.err" || fail "no clear error for --group-by fibre"
with_map=$out

# --- Without a perf map: JIT code runs unnamed from memfd:doublemapper
# (--names perfmap: not named from the runtime's memory either).
collect_options=(--names perfmap)
profile DOTNET_EnableDiagnostics=0
! grep -q '(deleted)' "$out/perf_script.out" || fail "a DSO with ' (deleted)' breaks perf-script readers"
# memfd code reads as one module: memfd:doublemapper!..., or JIT!JIT where the
# resolver calls unnamed generated code [JIT]; never "deleted)!...".
generated='memfd|deleted|^JIT!'
frames=$(reader frames "$out/prof.trace.zip" "$generated")
echo "$frames"
[[ -n $frames ]] || fail "no frame of generated code in perf.data.txt"
! grep -qE 'deleted|\(' <<<"$frames" || fail "PerfView's rules read generated code as: $frames"
"$PROFCPU" view "$out/prof.trace.zip" >"$workdir/view.txt" || fail "profcpu view failed"
grep -qE '^ +[0-9.]+% +[0-9.]+%  (memfd:doublemapper|JIT)!(unknown|JIT)$' "$workdir/view.txt" ||
	{ cat "$workdir/view.txt"; fail "profcpu view does not show the generated code's module"; }
! grep -q 'deleted' "$workdir/view.txt" || fail "profcpu view shows a broken memfd module"

# --- TraceEvent, PerfView's own reader, on both zips.
build_traceevent_checker traceevent
dotnet "$workdir/traceevent-bin/TraceEventCheck.dll" "$out/prof.trace.zip" 'memfd|deleted|^JIT!' | tee "$workdir/te-memfd"
grep -qxE 'frame (memfd:doublemapper!unknown|JIT!JIT)' "$workdir/te-memfd" ||
	fail "TraceEvent does not read the generated code's module"
! grep -q 'deleted' "$workdir/te-memfd" || fail "TraceEvent reads a broken memfd module"
dotnet "$workdir/traceevent-bin/TraceEventCheck.dll" "$with_map/prof.trace.zip" '^System\.Private\.CoreLib!\[[A-Za-z0-9]+\]System\.' | tee "$workdir/te-map"
ours=$(reader summary "$with_map/prof.trace.zip" | awk '$1 == "samples" {print $2}')
theirs=$(awk '$1 == "samples" {print $2}' "$workdir/te-map")
((theirs >= ours - 2 && theirs <= ours)) || fail "TraceEvent reads $theirs samples, perf.data.txt holds $ours"
grep -q '^frame System.Private.CoreLib!\[' "$workdir/te-map" || fail "TraceEvent does not name CoreLib methods with their tier"
echo "ok: readable names, thread names, full names kept, memfd modules readable"
