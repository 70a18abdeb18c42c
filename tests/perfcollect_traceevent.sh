#!/usr/bin/env bash
# The client PerfView uses: TraceEvent's Linux importer (from the NuGet
# package) opens our NAME.trace.zip of a real .NET app and finds the hot
# method, with its assembly and tier, in nearly every sample. Both of its
# readers: LinuxPerfScriptStackSource (PerfView's views) and
# ParallelLinuxPerfScriptStackSource (PerfView's /PerfScript command line),
# which lost or failed on samples of a deflated perf.data.txt.
source "$(dirname "$0")/lib.sh"

build_traceevent_checker traceevent
build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
pid=$started_pid
wait_for_tier1 "$pid"
cd "$workdir"
"$PERFCOLLECT" collect hot -pid "$pid" -collectsec 4

dotnet "$workdir/traceevent-bin/TraceEventCheck.dll" hot.trace.zip 'HotMethod' | tee result
ours=$(reader summary hot.trace.zip | awk '$1 == "samples" {print $2}')
theirs=$(awk '$1 == "samples" {print $2}' result)
# TraceEvent drops two samples of every file, perf's own output too.
((theirs >= ours - 2 && theirs <= ours)) || fail "TraceEvent reads $theirs samples, perf.data.txt holds $ours"
share=$(awk '$1 == "share" {print $2}' result)
python3 -c "import sys; sys.exit(0 if 85 <= $share <= 100 else 1)" ||
	fail "TraceEvent puts HotMethod in $share% of samples, expected 85..100%"
grep -qE '^frame hotloop!\[(OptimizedTier1|Optimized|Tier1)\]Demo\.Program::HotMethod\(int32\)$' result ||
	fail "TraceEvent does not name the frame hotloop![tier]Demo.Program::HotMethod(int32)"

dotnet "$workdir/traceevent-bin/TraceEventCheck.dll" --parallel hot.trace.zip 'HotMethod' | tee parallel ||
	fail "TraceEvent's parallel reader failed on perf.data.txt"
parallel=$(awk '$1 == "samples" {print $2}' parallel)
((parallel >= ours - 2 && parallel <= ours)) ||
	fail "TraceEvent's parallel reader reads $parallel samples, perf.data.txt holds $ours"
echo "ok: TraceEvent reads $theirs samples (its parallel reader $parallel), HotMethod in $share%"
