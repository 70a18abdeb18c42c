#!/usr/bin/env bash
# Source lines of precompiled (ReadyToRun) .NET code: a C# method with two
# loops on their own lines, the first doing twice the work
# (tests/dotnet/R2RTwoLoops), published ReadyToRun with its portable PDB
# beside it, and run without call counting (DOTNET_TC_CallCounting=0), so
# that the runtime never compiles it again: every sample is in its
# precompiled code, whose map of native to IL offsets only the image's
# debug info holds (the runtime's events map JIT code alone). go tool pprof
# -top -lines, the folded stacks and perf_script.out of --lines, and
# profcpu lines put two thirds of its time on the first line and a third
# on the second: with the diagnostics IPC (the runtime names the code),
# and without it (DOTNET_EnableDiagnostics=0: the image names it too); also
# where the runtime runs the code from its own copy of the image, made
# before the capture starts and while it runs.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/r2r_two_loops.sh"

echo "=== with the diagnostics IPC"
start_dotnet_app "$dll" 60
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 499 --lines -o "$workdir/ipc" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
grep -q 'EventPipe session' "$workdir/ipc/profcpu.log" || fail "collect did not talk to the runtime"
check_lines "$workdir/ipc"
check_lines_command "$workdir/ipc"

echo "=== without it: the image names the code and maps it"
DOTNET_EnableDiagnostics=0 start_dotnet_app "$dll" 60
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 499 --lines -o "$workdir/images" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
! grep -q 'EventPipe session' "$workdir/images/profcpu.log" || fail "collect talked to the runtime"
check_lines "$workdir/images"
check_lines_command "$workdir/images"

echo "=== the runtime's copy of the image (DOTNET_PELoader_DisableMapping=1)"
# Where the runtime cannot map an image as code, it copies it into
# anonymous memory and runs its precompiled code from there: the switch
# makes it do so here. The mappings of that code name no file.
# check_copied PID: PID runs TwoLoops from a copy, not from its file.
check_copied() {
	grep -q ' r-xp .*/r2rtwoloops\.dll$' "/proc/$1/maps" &&
		fail "the runtime mapped r2rtwoloops.dll as code: the switch did nothing"
	grep -q ' r--s .*/r2rtwoloops\.dll$' "/proc/$1/maps" ||
		fail "the runtime does not map r2rtwoloops.dll flat beside its copy"
}
echo "--- copied before the capture starts, with the diagnostics IPC"
DOTNET_PELoader_DisableMapping=1 start_dotnet_app "$dll" 60
check_copied "$started_pid"
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 499 --lines -o "$workdir/copied" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
check_lines "$workdir/copied"
check_lines_command "$workdir/copied"

echo "--- copied while the capture runs (a process started in the captured cgroup), without the IPC"
make_test_cgroup
"$PROFCPU" collect --cgroup "$test_cgroup" -duration 8 -F 499 --lines -o "$workdir/copied-late" >/dev/null 2>"$workdir/collect.err" &
profcpu_pid=$!
until grep -q 'sampling' "$workdir/collect.err"; do
	kill -0 "$profcpu_pid" 2>/dev/null || { cat "$workdir/collect.err"; fail "collect --cgroup failed"; }
	sleep 0.1
done
start bash -c "echo \$\$ >'$test_cgroup/cgroup.procs' && DOTNET_PELoader_DisableMapping=1 DOTNET_EnableDiagnostics=0 exec dotnet '$dll' 60 >'$workdir/late.out'"
until grep -q ready "$workdir/late.out" 2>/dev/null; do sleep 0.1; done
check_copied "$started_pid"
wait "$profcpu_pid" || { cat "$workdir/collect.err"; fail "collect --cgroup failed"; }
kill "$started_pid"
check_lines "$workdir/copied-late"
check_lines_command "$workdir/copied-late"

echo "--- without the PDB: the name and share stay, no line, the log says why"
mv "$app/r2rtwoloops.pdb" "$workdir/"
"$PROFCPU" postprocess -dir "$workdir/images" --lines >/dev/null 2>"$workdir/postprocess.err" ||
	{ cat "$workdir/postprocess.err"; fail "postprocess failed"; }
assert_share "$workdir/images/folded_stacks.out" 'Demo\.Program::TwoLoops$' 80 100
grep -F "no source lines for the .NET code of $dll: no PDB embedded and none beside it" "$workdir/images/profcpu.log" ||
	fail "the log does not say why $dll has no lines"
echo "ok"
