#!/usr/bin/env bash
# .NET apps whose runtime files are not in /tmp, as containers with a
# read-only root start them: TMPDIR moves the diagnostics socket, and
# DOTNET_PerfMapJitDumpPath the perf map and jitdump. profcpu reads where
# they went from the target's own environment, in collect and in ps.
source "$(dirname "$0")/lib.sh"

build_hotloop
check_named() {
	folded top "$1/folded_stacks.out" 2
	assert_share "$1/folded_stacks.out" 'hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)' 80 100
}

# TMPDIR: the socket is there; the IPC turns the perf map on (in /tmp, where
# the runtime puts it whatever TMPDIR says).
mkdir "$workdir/apptmp"
start_hotloop TMPDIR="$workdir/apptmp"
pid=$started_pid
ls "$workdir/apptmp"/dotnet-diagnostic-"$pid"-*-socket >/dev/null || fail "the runtime put no socket in its TMPDIR"
"$PROFCPU" ps >"$workdir/ps.txt"
grep -E "^ *$pid .*\.NET [0-9]+\.[0-9]+" "$workdir/ps.txt" ||
	{ cat "$workdir/ps.txt"; fail "ps does not show the runtime version it asks through the socket in TMPDIR"; }
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/tmpdir" 2>"$workdir/stderr"
cat "$workdir/stderr"
grep -q 'turned on the perf map' "$workdir/stderr" || fail "no word of turning the perf map on through the socket in TMPDIR"
check_named "$workdir/tmpdir"
kill "$pid"

# DOTNET_PerfMapJitDumpPath, with no diagnostics IPC (nor runtime events):
# the perf map it writes there is all that names JIT frames.
mkdir "$workdir/maps"
start_hotloop DOTNET_PerfMapEnabled=3 DOTNET_PerfMapJitDumpPath="$workdir/maps" DOTNET_EnableDiagnostics=0
pid=$started_pid
[[ -f "$workdir/maps/perf-$pid.map" ]] || fail "the runtime wrote no perf map in DOTNET_PerfMapJitDumpPath"
[[ ! -e "/tmp/perf-$pid.map" ]] || fail "the runtime wrote its perf map in /tmp too"
"$PROFCPU" ps >"$workdir/ps.txt"
grep -E "^ *$pid .* yes$" "$workdir/ps.txt" ||
	{ cat "$workdir/ps.txt"; fail "ps does not see the perf map in DOTNET_PerfMapJitDumpPath"; }
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/mapdir"
grep "copied $workdir/maps/perf-$pid.map" "$workdir/mapdir/profcpu.log" ||
	fail "the perf map was not copied from DOTNET_PerfMapJitDumpPath"
check_named "$workdir/mapdir"
# The whole machine's capture reads it there too.
"$PROFCPU" collect -a -duration 3 -o "$workdir/every"
grep -E "hotloop!Demo\.Program::HotMethod" "$workdir/every/folded_stacks.out" >/dev/null ||
	fail "collect -a did not name the hot loop from the perf map in DOTNET_PerfMapJitDumpPath"
