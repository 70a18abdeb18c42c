#!/usr/bin/env bash
# A real .NET app, built here with dotnet build and started with
# DOTNET_PerfMapEnabled=1: its hot managed method is named from the runtime's
# perf map and its stacks reach Main.
source "$(dirname "$0")/lib.sh"

build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
pid=$started_pid
wait_for_tier1 "$pid"
"$PROFCPU" collect -pid "$pid" -duration 4 -o "$workdir/out"

out=$workdir/out
folded top "$out/folded_stacks.out" 5
assert_share "$out/folded_stacks.out" ';hotloop!Demo\.Program::HotMethod(;|$)' 80 100
assert_share "$out/folded_stacks.out" ';hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::Caller;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)' 80 100
# Stacks start with the thread's name: Main runs on the thread named dotnet.
assert_share "$out/folded_stacks.out" '^dotnet;(.*;)?hotloop!Demo\.Program::Main;' 80 100
ls "$out"/perf-*.map >/dev/null || fail "the runtime's perf map was not copied"
grep -qP '\t +[0-9a-f]+ .*\[hotloop\] Demo\.Program::HotMethod\(int32\)\[\w+\] \(/tmp/perf-[0-9]+\.map\)$' \
	"$out/perf_script.out" || fail "perf_script.out lacks the JIT frame with its assembly and perf map DSO"
