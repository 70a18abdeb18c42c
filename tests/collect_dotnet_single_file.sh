#!/usr/bin/env bash
# A single-file .NET app (dotnet publish -p:PublishSingleFile=true): the
# runtime is linked into its executable, no libcoreclr.so is mapped, and the
# framework's precompiled (ReadyToRun) code runs from inside the executable.
# profcpu knows it for .NET all the same: ps says so, and collect (-pid, and
# -a --enable-perfmaps) turns its perf map and jitdump on through its
# diagnostics socket, so its own methods (jitted) and the framework's
# (ReadyToRun, in the bundle) are named. Without the IPC, the framework's
# code is named from the assemblies stored in the executable, where its
# bundle manifest says, and its own from the runtime's memory (.NET 10's
# executable exports the runtime's contract descriptor). Source lines come
# from the app's PDB beside it.
# R2RLoop spends its time in Array.Sort and Dictionary lookups.
source "$(dirname "$0")/lib.sh"

publish_dotnet_app R2RLoop "$workdir/single" -p:PublishSingleFile=true
app=$workdir/single/r2rloop
export DOTNET_TC_CallCounting=0 # the framework stays in its ReadyToRun code

# start_single_file [ENV...]: starts the app; its pid in $started_pid.
start_single_file() {
	start_until_ready env "$@" "$app" 60
}

# check_named FOLDED: the app's frames and the framework's, named.
check_named() {
	folded top "$1" 3
	assert_share "$1" 'r2rloop!Demo\.Program::SortRound;System\.Private\.CoreLib!System\.Collections\.Generic\.[A-Za-z]*ArraySortHelper`1\[Int32\]::' 50 100
	assert_share "$1" 'r2rloop!Demo\.Program::LookupRound;System\.Private\.CoreLib!System\.Collections\.Generic\.Dictionary`2' 2 100
	# Unnamed code under Main: [JIT] (runtime stubs are left) or the
	# executable's own name, which framework code would show as unnamed.
	assert_share "$1" 'Demo\.Program::Main;(.*;)?\[(JIT|r2rloop)\]' 0 10
}

start_single_file
pid=$started_pid
! grep -q libcoreclr "/proc/$pid/maps" || fail "the single-file app maps libcoreclr.so: not the shape under test"

"$PROFCPU" ps >"$workdir/ps.txt"
grep -E "^ *$pid .*\.NET [0-9]+\.[0-9]+" "$workdir/ps.txt" ||
	{ cat "$workdir/ps.txt"; fail "ps does not call the single-file app .NET"; }

"$PROFCPU" collect -pid "$pid" -duration 5 -F 499 -o "$workdir/pid" 2>"$workdir/stderr"
cat "$workdir/stderr"
grep -q 'turned on the perf map' "$workdir/stderr" || fail "no word of turning the perf map on"
assert_file "$workdir/pid/runtime.nettrace" # its runtime events, through the same socket
check_named "$workdir/pid/folded_stacks.out"
kill "$started_pid"
# Source lines: the app's assembly is inside the executable (the runtime
# names it by a path in its folder, where no file is), its PDB beside it.
"$PROFCPU" postprocess -dir "$workdir/pid" --lines >/dev/null
assert_share "$workdir/pid/folded_stacks.out" 'r2rloop!Demo\.Program::SortRound Program\.cs:[0-9]+;' 50 100

# The whole machine: each .NET process in it, single-file ones included.
start_single_file
pid=$started_pid
"$PROFCPU" collect -a --enable-perfmaps -duration 5 -F 499 -o "$workdir/every" 2>"$workdir/stderr"
grep "turned on the perf map and jitdump of .NET pid $pid" "$workdir/stderr" ||
	fail "collect -a --enable-perfmaps did not turn the single-file app's perf map on"
grep -E "^r2rloop-$pid;" "$workdir/every/folded_stacks.out" >"$workdir/app.folded" ||
	fail "collect -a has no samples of the app"
check_named "$workdir/app.folded"
kill "$started_pid"

# No diagnostics IPC (DOTNET_EnableDiagnostics=0), so no jitdump: the
# framework's ReadyToRun code is named from the assemblies stored in the
# executable, where its manifest says. The app's own methods are jitted:
# named from the runtime's memory (its modules' files read from the
# executable too).
start_single_file DOTNET_EnableDiagnostics=0
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 5 -F 499 -o "$workdir/no-ipc" 2>"$workdir/stderr"
kill "$pid"
folded top "$workdir/no-ipc/folded_stacks.out" 2
assert_share "$workdir/no-ipc/folded_stacks.out" \
	'r2rloop!Demo\.Program::SortRound;System\.Private\.CoreLib!System\.Collections\.Generic\.[A-Za-z]*ArraySortHelper`1\[Int32\]::' 50 100
assert_share "$workdir/no-ipc/folded_stacks.out" 'System\.Private\.CoreLib!System\.Collections\.Generic\.Dictionary`2' 2 100
# Framework code left unnamed shows as the executable's name under the app's frames.
assert_share "$workdir/no-ipc/folded_stacks.out" 'Demo\.Program::[^;]*;(.*;)?\[r2rloop\]' 0 5
assert_share "$workdir/no-ipc/folded_stacks.out" '\[JIT\]' 0 1
grep 'ReadyToRun: .* named from the images' "$workdir/no-ipc/profcpu.log" ||
	fail "the log says nothing of the assemblies read from the executable"
# After the app is gone, a postprocess reads them from the executable again.
"$PROFCPU" postprocess -dir "$workdir/no-ipc" >/dev/null
assert_share "$workdir/no-ipc/folded_stacks.out" \
	'r2rloop!Demo\.Program::SortRound;System\.Private\.CoreLib!System\.Collections\.Generic\.[A-Za-z]*ArraySortHelper`1\[Int32\]::' 50 100
