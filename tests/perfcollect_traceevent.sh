#!/usr/bin/env bash
# The client PerfView uses: TraceEvent's Linux importer
# (LinuxPerfScriptStackSource, from the NuGet package) opens our
# NAME.trace.zip of a real .NET app and finds the hot method, with its
# assembly and tier, in nearly every sample.
source "$(dirname "$0")/lib.sh"

command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
cp -r "$tests_dir/traceevent" "$workdir/check"
timeout 90 dotnet restore "$workdir/check/TraceEventCheck.csproj" >"$workdir/restore.log" 2>&1 ||
	skip "Microsoft.Diagnostics.Tracing.TraceEvent cannot be restored from this machine's NuGet sources: $(grep -m1 -E 'error|NU[0-9]+' "$workdir/restore.log" || tail -1 "$workdir/restore.log")"
dotnet build --no-restore -c Release -o "$workdir/check-bin" "$workdir/check/TraceEventCheck.csproj" \
	>"$workdir/check-build.log" 2>&1 || { tail -20 "$workdir/check-build.log"; fail "the TraceEvent check does not build"; }
build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
pid=$started_pid
wait_for_tier1 "$pid"
cd "$workdir"
"$PERFCOLLECT" collect hot -pid "$pid" -collectsec 4

dotnet "$workdir/check-bin/TraceEventCheck.dll" hot.trace.zip 'HotMethod' | tee result
ours=$(reader summary hot.trace.zip | awk '$1 == "samples" {print $2}')
theirs=$(awk '$1 == "samples" {print $2}' result)
# TraceEvent drops two samples of every file, perf's own output too.
((theirs >= ours - 2 && theirs <= ours)) || fail "TraceEvent reads $theirs samples, perf.data.txt holds $ours"
share=$(awk '$1 == "share" {print $2}' result)
python3 -c "import sys; sys.exit(0 if 85 <= $share <= 100 else 1)" ||
	fail "TraceEvent puts HotMethod in $share% of samples, expected 85..100%"
grep -qE '^frame hotloop!\[(OptimizedTier1|Optimized|Tier1)\]Demo\.Program::HotMethod\(int32\)$' result ||
	fail "TraceEvent does not name the frame hotloop![tier]Demo.Program::HotMethod(int32)"
echo "ok: TraceEvent reads $theirs samples, HotMethod in $share%"
