#!/usr/bin/env bash
# A real .NET app (DOTNET_PerfMapEnabled=1) through perfcollect's form: in
# perf.data.txt, read by PerfView's rules, the hot method carries its
# assembly and tier, and the zip ships the runtime's perf map and jitdump.
source "$(dirname "$0")/lib.sh"

build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
pid=$started_pid
wait_for_tier1 "$pid"
cd "$workdir"
"$PERFCOLLECT" collect hot -pid "$pid" -collectsec 4

unzip -Z1 hot.trace.zip | tee listing
grep -qx "hot.trace/perf-$pid.map" listing || fail "the zip lacks perf-$pid.map"
grep -qx "hot.trace/jit-$pid.dump" listing || fail "the zip lacks jit-$pid.dump (DOTNET_PerfMapEnabled=1 writes it)"
grep -qx 'target DOTNET_PerfMapEnabled: 1' <(unzip -p hot.trace.zip hot.trace/perfcollect.log) ||
	fail "perfcollect.log does not record the target's DOTNET_PerfMapEnabled"

reader summary hot.trace.zip | tee summary
grep -qx 'without_cpu 0' summary || fail "samples without [cpu]"
reader frames hot.trace.zip '^hotloop!' | tee frames
grep -qE '^\[(OptimizedTier1|Optimized|Tier1)\] hotloop!Demo\.Program::HotMethod\(int32\)$' frames ||
	fail "HotMethod lacks its assembly module (hotloop) or its optimization tier"
assert_trace_share hot.trace.zip '^hotloop!Demo\.Program::HotMethod\(int32\)$' 85 100
assert_trace_share hot.trace.zip '^hotloop!Demo\.Program::Main\(string\[\]\)$' 85 100
