#!/usr/bin/env bash
# A .NET app started with DOTNET_EnableDiagnostics=0 (no diagnostics IPC,
# no perf map, no jitdump), as hardened images run: collect names its JIT
# frames from the runtime's memory as it samples (memory_perfmap.h), with
# no [JIT] leaf beyond 1% of the samples and the hot method's share that of
# the same app named through its IPC; the app is left with no file written.
source "$(dirname "$0")/lib.sh"

build_hotloop

# The second opinion: the IPC's perf map and jitdump.
start_hotloop
"$PROFCPU" collect -pid "$started_pid" -duration 4 -o "$workdir/ipc" >/dev/null 2>&1 ||
	fail "collect failed on the app with its IPC"
kill "$started_pid"

start_hotloop DOTNET_EnableDiagnostics=0
pid=$started_pid
compgen -G "/tmp/dotnet-diagnostic-$pid-*" >/dev/null &&
	fail "the app opened its diagnostics IPC despite DOTNET_EnableDiagnostics=0"
"$PROFCPU" collect -pid "$pid" -duration 4 -o "$workdir/memory" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "collect failed on the app without diagnostics"; }
cat "$workdir/stderr"
grep -q "naming the JIT frames of .NET pid $pid from its runtime's memory" "$workdir/stderr" ||
	fail "collect did not say it names JIT frames from the runtime's memory"
grep "names from the runtime's memory" "$workdir/memory/profcpu.log"

folded top "$workdir/memory/folded_stacks.out" 5
assert_share "$workdir/memory/folded_stacks.out" '\[JIT\]' 0 1
assert_shares_agree ipc "$workdir/ipc/folded_stacks.out" memory "$workdir/memory/folded_stacks.out" 5 \
	';hotloop!Demo\.Program::HotMethod(;|$)' \
	';hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::Caller;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)'
# perf script's text as the perf map route writes it: the runtime's form of
# the name, the capture's map as the frame's DSO.
grep -qP '\t +[0-9a-f]+ .*\[hotloop\] Demo\.Program::HotMethod\(int32\) \(/tmp/perf-[0-9]+\.map\)$' \
	"$workdir/memory/perf_script.out" || fail "perf_script.out lacks HotMethod with its perf map DSO"

# postprocess reads the capture's map alone: the same names after the app exits.
kill "$pid"
wait "$pid" 2>/dev/null || true
rm "$workdir/memory/folded_stacks.out"
"$PROFCPU" postprocess -dir "$workdir/memory" >/dev/null 2>&1 || fail "postprocess of the capture failed"
assert_share "$workdir/memory/folded_stacks.out" '\[JIT\]' 0 1
assert_share "$workdir/memory/folded_stacks.out" ';hotloop!Demo\.Program::HotMethod(;|$)' 80 100

# Read, not asked: the app wrote no perf map or jitdump.
for file in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"; do
	[[ ! -e $file ]] || fail "$file appeared in an app named from its memory"
done

# --names perfmap keeps the old route: no names from memory, [JIT] leaves.
start_hotloop DOTNET_EnableDiagnostics=0
"$PROFCPU" collect -pid "$started_pid" -duration 2 --names perfmap -o "$workdir/perfmap" >/dev/null 2>&1 ||
	fail "collect --names perfmap failed"
assert_share "$workdir/perfmap/folded_stacks.out" '\[JIT\]' 50 100
"$PROFCPU" collect -pid "$started_pid" --names other -duration 1 -o "$workdir/bad" 2>"$workdir/bad-names" &&
	fail "collect accepted --names other"
grep -q "invalid --names other: give perfmap, memory or auto" "$workdir/bad-names" ||
	fail "the error does not say which routes there are: $(cat "$workdir/bad-names")"
echo PASS
